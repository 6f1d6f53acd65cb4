"""A/B: what compiling a reduction kernel without FMA contraction costs. cross_entropy in bf16, the module
kerntailor generates for sm_90 with its main kernel's schedule fixed (two schedules), timed with contraction
allowed and with `enable_fp_fusion=False` on that kernel's launch, in one process on one GPU, beside eager.
triton.testing.do_bench medians. On a GPU machine, from the repository root:

    PYTHONPATH=src python3 benchmarks/fma_ab_cross_entropy.py OUT.json
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEDULES = ({"XBLOCK": 1, "RBLOCK": 4096, "num_warps": 16, "num_stages": 1, "persistent": False},
             {"XBLOCK": 2, "RBLOCK": 1024, "num_warps": 8, "num_stages": 1, "persistent": False})


def main() -> None:
    import torch
    import triton

    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule, generate_module
    from kerntailor.codegen.fused import ReductionSchedule
    from kerntailor.plan import plan_fusion
    from kerntailor.plan.fusion import Plan
    from kerntailor.problem import load_problem

    spec = load_problem(ROOT / "problems" / "level1" / "cross_entropy.py", dtype="bf16")
    _, gen = capture_generalized(spec)
    plan = Plan(plan_fusion(gen.graph, FAMILIES).launch_order())
    ref = spec.make_model("default", "cuda").eval()
    inputs = spec.make_inputs("default", "cuda")
    out: dict = {"device": torch.cuda.get_device_name()}
    for schedule in SCHEDULES:
        schedules = {g.name: default_schedule(gen, g) for g in plan.groups} | {"k0": ReductionSchedule(**schedule)}
        source = generate_module(spec, gen, plan, schedules, "h200", "sm_90").source
        launch = f"num_warps={schedule['num_warps']}, num_stages=1)"
        for fusion in (True, False):
            text = source if fusion else source.replace(launch, launch[:-1] + ", enable_fp_fusion=False)", 1)
            path = Path(tempfile.mkdtemp()) / "kernel.py"
            path.write_text(text)
            loaded = importlib.util.spec_from_file_location(f"m{len(out)}", path)
            module = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(module)
            cand = module.ModelNew(*spec.init_inputs("default")).cuda().to(torch.bfloat16)
            cand.load_state_dict(ref.state_dict())
            with torch.no_grad():
                us = triton.testing.do_bench(lambda m=cand: m(*inputs), return_mode="median") * 1e3
            key = (f"{schedule['XBLOCK']}x{schedule['RBLOCK']} w{schedule['num_warps']} "
                   f"fusion={'on' if fusion else 'off'} flagged={'enable_fp_fusion=False' in text}")
            out[key] = us
            print(key, round(us, 1), flush=True)
    with torch.no_grad():
        out["eager"] = triton.testing.do_bench(lambda: ref(*inputs), return_mode="median") * 1e3
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
