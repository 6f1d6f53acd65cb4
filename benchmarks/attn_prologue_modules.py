"""Modules for an A/B of the attention's operand prologues (issue #20 item 3): the same problem emitted with the
rotary embedding computed in the attention's loads of q and k (the plan's default), of q only (k's RoPE its own
pointwise kernel), or of neither, each under a few attention schedules; every other group at its default schedule.

On the H200 (2026-12-05, rope_sdpa at B 2, T 2048, 16 heads of 128, bf16) the generated module lost to torch.compile
(707 vs 322 us) and its attention search kept one schedule of five: with k's prologue (k, its rotated halves, cos and
sin loaded on every key step) the 128 x 64 and 128 x 128 tiles took 256-480 KiB of shared memory at 3 stages, and the
TMA loads cannot compute a prologue. These modules let benchmarks/libtail_profile.py time each attention kernel.

    PYTHONPATH=src python3 benchmarks/attn_prologue_modules.py PROBLEM.py OUTDIR [--dtype bf16] [--arch sm_90]

writes OUTDIR/<plan>_<BMxBN>_<warps>w_<stages>s[_tma].py (a ModelNew file each) and prints their names. CPU only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kerntailor.capture.capture import capture_generalized
from kerntailor.codegen import FAMILIES, default_schedule, generate_module, refused_anchors
from kerntailor.codegen.attention import AttentionSchedule
from kerntailor.plan import fusion, plan_fusion
from kerntailor.problem import load_problem

PLANS = {"qk": (0, 1), "q": (0,), "none": ()}
SCHEDULES = {   # plan -> (BLOCK_M, BLOCK_N, warps, stages, TMA)
    # the Hopper seeds with a computed k (search/families.py's attention_seeds) and 128 x 64 at 1 stage; 128 x 128 at
    # 2 stages takes 294,912 B on sm_90 (cross-compiled), over the 227 KiB
    "qk": [(128, 32, 8, 2, 0), (128, 32, 8, 3, 0), (128, 64, 8, 2, 0), (128, 64, 8, 1, 0), (128, 128, 8, 1, 0)],
    "q": [(128, 128, 8, 3, 1), (128, 128, 8, 3, 0), (128, 64, 8, 3, 1), (128, 128, 8, 2, 1)],
    "none": [(128, 128, 8, 3, 1)],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("out")
    parser.add_argument("--dtype", default="bf16")
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args(argv)
    spec = load_problem(args.problem, dtype=args.dtype)
    _, gen = capture_generalized(spec)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    saved = fusion.PROLOGUE_OPERANDS
    for plan_name, operands in PLANS.items():
        fusion.PROLOGUE_OPERANDS = operands
        try:
            plan = plan_fusion(gen.graph, tuple(FAMILIES), library=refused_anchors(gen.graph))
        finally:
            fusion.PROLOGUE_OPERANDS = saved
        base = {g.name: default_schedule(gen, g) for g in plan.groups}
        attention = [g.name for g in plan.groups if g.family == "attention"]
        for bm, bn, warps, stages, tma in SCHEDULES[plan_name]:
            schedules = dict(base) | {name: AttentionSchedule(BLOCK_M=bm, BLOCK_N=bn, num_warps=warps,
                                                              num_stages=stages, TMA=tma) for name in attention}
            module = generate_module(spec, gen, plan, schedules, "h200", args.arch)
            name = f"{plan_name}_{bm}x{bn}_{warps}w_{stages}s{'_tma' if tma else ''}"
            (out / f"{name}.py").write_text(module.source)
            print(name, f"{len(plan.groups)} kernels:", " ".join(g.family for g in plan.groups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
