"""The search stage of `generate` alone, timed on this machine: capture and plan (pipeline._capture,
_plan_around_refusals), then every group's search_group in plan order as pipeline._search_groups runs them (twin
groups searched once), with `--candidates 1 --budget 1`-sized settings, predicted mode for TARGET. Prints the
seconds of each part and writes the chosen schedules and the final kernel.py text to OUT (JSON), so two commits'
choices can be compared (same schedules, same text).

    PYTHONPATH=src python benchmarks/search_stage_time.py PROBLEM.py OUT.json [--target mi300x]

No referee runs: this measures where a big model's search time goes (15_DenseNet121, 131 groups), not a verdict.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from kerntailor.generate import pipeline
from kerntailor.generate.evaluate import close_gpu_worker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("out", type=Path)
    ap.add_argument("--target", default="mi300x")
    args = ap.parse_args()
    settings = pipeline.GenerateSettings(target=args.target, budget_s=1, max_candidates=1, use_store=False,
                                         store_lookup=False, out_dir=Path(tempfile.mkdtemp(prefix="kt-search-")))
    run = pipeline._start(args.problem, settings, lambda *a: None)
    began = time.monotonic()
    pipeline._capture(run)
    schedules = pipeline._plan_around_refusals(run)
    planned = time.monotonic()
    searches = pipeline._search_groups(run, schedules)
    searched = time.monotonic()
    close_gpu_worker()
    chosen = {s.group.name: [repr(r) for r in s.ranked] + [list(s.seconds)] for s in searches}
    args.out.write_text(json.dumps({"chosen": chosen, "module": run.module(schedules).source}, default=str))
    print(f"{Path(args.problem).stem}: groups {len(run.plan.groups)}, capture+plan {planned - began:.1f} s, "
          f"search {searched - planned:.1f} s")


if __name__ == "__main__":
    main()
