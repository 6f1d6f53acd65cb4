"""The analytical model's prediction for each fusion group of a problem at its default schedule, with its terms.

    PYTHONPATH=src python3 benchmarks/explain_groups.py PROBLEM.py [--target mi300x] [--dtype bf16]

Prints one line per group: family, work sizes, and AnalyticalModel.explain's Prediction (seconds, the in-flight
penalty, the wave quantization, programs and slots). CPU only (no build: ISA facts estimated)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem", type=Path)
    ap.add_argument("--target", default="mi300x")
    ap.add_argument("--dtype", default=None)
    args = ap.parse_args(argv)
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule
    from kerntailor.costmodel.analytical import AnalyticalModel
    from kerntailor.costmodel.candidate import Candidate
    from kerntailor.generate.kernels import group_work
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem
    from kerntailor.search.config import Config
    from kerntailor.targets import get_target

    spec = load_problem(args.problem, dtype=args.dtype)
    _, gen = capture_generalized(spec)
    plan = plan_fusion(gen.graph, FAMILIES)
    model = AnalyticalModel(get_target(args.target))
    for g in plan.groups:
        work, _ = group_work(gen, g, args.dtype or "fp32")
        config = Config(g.family, tuple(sorted(default_schedule(gen, g).knobs().items())))
        p = model.explain(Candidate(config, work))
        print(f"{g.name} {g.family} {dict(work.size_map)}: {p.seconds * 1e6:.1f} us (predicted, {args.target}) "
              f"penalty {p.occupancy_penalty:.3g} quantization {p.quantization:.3g} programs {p.programs} "
              f"slots {p.slots} bound {p.bound}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
