"""The analytical model's bytes-in-flight term (costmodel/analytical.py, inflight_penalty) against the committed H200
measurements: how the model ranks every schedule the bench runs timed, with MEMORY_LATENCY_S swept (0 = the term
off, the model before 2026-12-05). Fit on the 2026-11-30 stores (the analytical model never saw them; the
schedules there were proposed without a learned ranker), checked on the 2026-12-01 ones (timed after the learned
ranker chose them: its favourites and the seeds, not a random sample), and per family over all of them.
Scores: kerntailor.costmodel.persist's (top-1 / top-5 hit rate of the measured-fastest schedule, mean Spearman per
kernel over kernels with 3+ schedules). CPU only, ~2 min.

    PYTHONPATH=src python3 benchmarks/costmodel_inflight.py \
        --out benchmarks/data/costmodel_inflight_h200_2026-12-05.json
"""

from __future__ import annotations

import argparse
import datetime
import glob
import gzip
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LATENCIES_US = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
SETS = {"fit: 2026-11-30 stores": "*2026-11-30*store*.gz", "check: 2026-12-01 stores": "*2026-12-01*store*.gz"}


def load(pattern: str) -> list:
    from kerntailor.costmodel.persist import rows_from_store
    from kerntailor.store import Store

    rows = []
    for p in sorted(glob.glob(str(ROOT / "benchmarks" / "data" / pattern))):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "store.sqlite"
            with gzip.open(p) as src, open(db, "wb") as dst:
                shutil.copyfileobj(src, dst)
            store = Store(db)
            rows += rows_from_store(store, "h200")
            store.close()
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(r.group_key, []).append(r)
    return [r for rs in groups.values() if len(rs) >= 3 for r in rs]


def main() -> None:
    from kerntailor.costmodel import analytical
    from kerntailor.costmodel.persist import _summary
    from kerntailor.targets import get_target

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    target, kept = get_target("h200"), dict(analytical.MEMORY_LATENCY_S)
    sets = {name: load(pattern) for name, pattern in SETS.items()}
    everything = [r for rows in sets.values() for r in rows]
    for family in ("reduction", "pointwise", "matmul", "pool"):
        sets[f"all stores, {family}"] = [r for r in everything if r.candidate.config.family == family]
    results = []
    for name, rows in sets.items():
        for lat in LATENCIES_US:
            analytical.MEMORY_LATENCY_S = {"amd": lat * 1e-6, "nvidia": lat * 1e-6}
            predicted = analytical.AnalyticalModel(target).predict([r.candidate for r in rows])
            s = _summary("analytical", predicted, rows, 0)
            row = {"set": name, "latency_us": lat, "schedules": len(rows), "kernels": s.groups,
                   "top1": round(s.top1_hit_rate, 3), "top5": round(s.top5_hit_rate, 3),
                   "spearman": round(s.spearman, 3)}
            results.append(row)
            print(json.dumps(row), flush=True)
    analytical.MEMORY_LATENCY_S = kept
    if args.out:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        args.out.write_text(json.dumps({
            "label": "analytical cost model ranking vs H200 measurements (committed stores); computed on CPU",
            "command": "PYTHONPATH=src python3 benchmarks/costmodel_inflight.py --out " + str(args.out),
            "commit": commit, "date": datetime.date.today().isoformat(),
            "chosen_nvidia_latency_us": kept["nvidia"] * 1e6,
            "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
