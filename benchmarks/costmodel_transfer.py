"""The learned cost model forward in time: fit on the schedules one bench run measured, rank the schedules a
later run measured (other commits, kernels the model never saw), beside the analytical model. Also the
usual folds-by-problem report over the later run alone.

    python benchmarks/costmodel_transfer.py --target h200 --train OLD.sqlite[.gz] ... --test NEW.sqlite ... --out F.json

Caveat, written into the output: when the later run used the saved model to pick what to time (bench with a
ranker), its timed schedules are the model's own favourites plus the seeds, so the test rows are not a
random sample of the space.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path


def _rows(paths: list[str], target: str):
    from kerntailor.costmodel.persist import rows_from_store
    from kerntailor.store import Store

    rows = []
    for p in paths:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "store.sqlite"
            if p.endswith(".gz"):
                with gzip.open(p) as src, open(db, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                shutil.copy(p, db)
            store = Store(db)
            rows += rows_from_store(store, target)   # grouped by problem key (dtype included) and kernel
            store.close()
    return rows


def main() -> None:
    from kerntailor.costmodel.analytical import AnalyticalModel
    from kerntailor.costmodel.learned import LearnedModel
    from kerntailor.costmodel.persist import _summary, quality_report
    from kerntailor.targets import get_target

    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--test", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    target = get_target(args.target)
    train, test = _rows(args.train, target.name), _rows(args.test, target.name)
    groups: dict[str, list] = {}
    for r in test:
        groups.setdefault(r.group_key, []).append(r)
    test = [r for rs in groups.values() if len(rs) >= 3 for r in rs]   # something to rank
    model = LearnedModel(target).fit(train)
    learned = model.predict([r.candidate for r in test])
    analytical = AnalyticalModel(target).predict([r.candidate for r in test])
    result = {
        "target": target.name, "train": args.train, "test": args.test,
        "train_rows": len(train), "test_rows": len(test),
        "caveat": "the test run timed the schedules its ranker (this model's predecessor) and the seeds chose: "
                  "not a random sample of the space",
        "forward": [asdict(_summary("analytical", analytical, test, 0)),
                    asdict(_summary("learned", learned, test, len(train)))],
        "folds_on_test": quality_report(test, target),
    }
    Path(args.out).write_text(json.dumps(result, indent=1))
    for m in result["forward"] + result["folds_on_test"]["models"]:
        print(m)


if __name__ == "__main__":
    main()
