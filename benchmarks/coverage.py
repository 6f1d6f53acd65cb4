"""Coverage of the memory-bound family on a CPU-only machine: for every problem whose fusion groups code
generation covers, generate kernel.py (default schedules), judge it with the referee under the Triton
interpreter (small variants), and cross-compile every kernel for gfx942, gfx90a, gfx950 and sm_90.

    python benchmarks/coverage.py --out benchmarks/data/memory_bound_coverage_cpu.json [--dtype bf16]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("pointwise", "reduction", "scan", "pool")
TARGETS = ("mi300x", "mi250x", "mi355x", "h200")


def main() -> None:
    import torch
    import triton

    from kerntailor.builder import build_many
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule, generate_module, plan_of
    from kerntailor.errors import KerntailorError
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.problem import load_problem
    from kerntailor.targets import get_target
    from kerntailor.verify import verify_candidate

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--dtype", default=None)
    args = parser.parse_args()
    rows = []
    targets = [get_target(t) for t in TARGETS]
    for path in sorted((ROOT / "problems").glob("level*/*.py")):
        row = {"problem": str(path.relative_to(ROOT))}
        try:
            problem = load_problem(path, dtype=args.dtype)
            capture, gen = capture_generalized(problem)
        except KerntailorError as e:
            row["skipped"] = str(e)
            rows.append(row)
            continue
        plan = plan_of(gen.graph)
        families = [g.family for g in plan.groups]
        if any(f not in FAMILIES for f in families):
            row["skipped"] = f"not memory-bound (families {families})"
            rows.append(row)
            continue
        schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
        module = generate_module(problem, gen, plan, schedules, "mi300x", "gfx942")
        with tempfile.TemporaryDirectory() as tmp:
            kernel_path = Path(tmp) / "kernel.py"
            kernel_path.write_text(module.source)
            started = time.monotonic()
            verdict = verify_candidate(problem, kernel_path)
            row["verdict"] = {"passed": verdict.passed, "check": verdict.check, "reason": verdict.reason,
                              "mode": verdict.mode, "rel_norm_err": verdict.rel_norm_err,
                              "seconds": round(time.monotonic() - started, 1)}
        sources = [kernel_source(module.source, kernel, gen) for kernel in module.kernels]
        builds = build_many(sources, targets, timeout_s=300)
        row["kernels"] = []
        groups = {g.name: g for g in plan.groups}
        for i, group in enumerate(groups[k.group] for k in module.kernels):   # kernels in launch order
            entry = {"group": group.name, "family": group.family, "knobs": schedules[group.name].knobs(),
                     "targets": {}}
            for j, target in enumerate(targets):
                b = builds[i * len(targets) + j]
                f = b.facts
                entry["targets"][target.name] = {
                    "ok": b.ok, "error": b.error, "rejected": b.rejected_reason,
                    "registers": f and f.registers, "vgprs": f and f.vgprs, "spills": f and f.spills,
                    "lds_bytes": f and f.lds_bytes, "occupancy": f and f.occupancy_rule}
            row["kernels"].append(entry)
        print(json.dumps({"problem": row["problem"], "passed": verdict.passed,
                          "built": all(t["ok"] for k in row["kernels"] for t in k["targets"].values())}), flush=True)
        rows.append(row)
    result = {"command": " ".join(["python"] + sys.argv), "date": datetime.date.today().isoformat(),
              "machine": f"CPU only ({platform.node()}), Triton interpreter", "torch": torch.__version__,
              "triton": triton.__version__, "dtype": args.dtype or "fp32", "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
