"""Probe: how fast can kerntailor's own tf32x3 GEMM get on the H200? gemm_bias_relu in fp32 (4096 x 14336 x
4096, x @ W.T + b, ReLU) under `--precision tf32x3`, the module generate_module emits for sm_90, over a grid
of schedules the search's 6 random candidates may never reach (its tf32x3 pick on 2026-12-01 was 128x128x32,
8 warps, 2 stages at 2.1x the tf32x3 floor). Side by side in one process on one GPU: each schedule, eager
(cuBLAS sgemm, strict fp32) and the relative error of every output against a float64 reference.
Timing: triton.testing.do_bench medians (L2 flushed between runs). Writes JSON to argv[1].

    PYTHONPATH=src python3 benchmarks/tf32x3_probe.py OUT.json     # on the GPU machine
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/tf32x3_probe.py --smoke   # CPU: small variant, 2 schedules
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ROOT / "problems" / "level2" / "gemm_bias_relu.py"

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, TMA, PERSISTENT)
GRID = [
    (128, 128, 32, 8, 2, 0, 0),   # the search's pick (reference point)
    (128, 128, 32, 8, 3, 0, 0), (128, 128, 32, 8, 4, 0, 0), (128, 128, 32, 4, 3, 0, 0),
    (128, 128, 32, 8, 3, 1, 0), (128, 128, 32, 8, 4, 1, 0), (128, 128, 32, 8, 3, 1, 1), (128, 128, 32, 8, 4, 1, 1),
    (128, 256, 32, 8, 3, 0, 0), (128, 256, 32, 8, 3, 1, 0), (128, 256, 32, 8, 3, 1, 1), (128, 256, 16, 8, 4, 1, 1),
    (256, 128, 32, 8, 3, 0, 0), (256, 128, 32, 8, 3, 1, 0), (256, 128, 32, 8, 3, 1, 1),
    (128, 128, 64, 8, 2, 0, 0), (128, 128, 64, 8, 3, 1, 1), (128, 128, 16, 8, 4, 1, 1),
    (64, 128, 32, 4, 4, 1, 1), (128, 64, 32, 4, 4, 1, 1), (64, 256, 32, 8, 3, 1, 1),
]


def _module(knobs: dict, dtype: str | None = None, problem: Path = PROBLEM, edit=None):
    """(spec, the loaded module) that generate_module emits for sm_90 under `knobs`; `edit` rewrites the text."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, generate_module
    from kerntailor.codegen.gemm import MatmulSchedule
    from kerntailor.plan import plan_fusion
    from kerntailor.plan.fusion import Plan
    from kerntailor.problem import load_problem

    spec = load_problem(problem, dtype=dtype)
    _, gen = capture_generalized(spec)
    plan = Plan(plan_fusion(gen.graph, FAMILIES).launch_order())
    (group,) = plan.groups
    source = generate_module(spec, gen, plan, {group.name: MatmulSchedule.from_knobs(knobs)}, "probe", "sm_90").source
    source = edit(source) if edit else source
    path = Path(tempfile.mkdtemp()) / "kernel.py"
    path.write_text(source)
    loaded = importlib.util.spec_from_file_location(f"probe_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return spec, module


def _rel(out, ref) -> float:
    return float((out.double() - ref).norm() / ref.norm())


def main() -> None:
    import torch
    import triton

    smoke = "--smoke" in sys.argv
    device = "cuda" if torch.cuda.is_available() and not smoke else "cpu"
    variant = "small" if smoke else "default"
    grid = GRID[:2] if smoke else GRID
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    ref_model = out_ref = inputs = None
    for bm, bn, bk, warps, stages, tma, persistent in grid:
        knobs = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": warps, "num_stages": stages,
                 "split_k": 1, "precision": "tf32x3", "TMA": tma, "PERSISTENT": persistent}
        row = {"variant": f"{bm}x{bn}x{bk} w{warps} s{stages}" + (" TMA" if tma else "")
               + (" persistent" if persistent else "")}
        try:
            spec, module = _module(knobs)
            if ref_model is None:
                ref_model = spec.make_model(variant, device).eval()
                inputs = spec.make_inputs(variant, device)
                with torch.no_grad():
                    out_ref = ref_model.double()(*[x.double() for x in inputs])
                ref_model = ref_model.float()
                if device == "cuda":
                    rows.append({"variant": "eager (cuBLAS sgemm)", "us": triton.testing.do_bench(
                        lambda m=ref_model, xs=inputs: m(*xs), return_mode="median") * 1e3,
                        "rel_err": _rel(ref_model(*inputs), out_ref)})
            cand = module.ModelNew(*spec.init_inputs(variant)).to(device)
            cand.load_state_dict(ref_model.state_dict())
            with torch.no_grad():
                row["rel_err"] = _rel(cand(*inputs), out_ref)
                if device == "cuda":
                    row["us"] = triton.testing.do_bench(lambda m=cand, xs=inputs: m(*xs), return_mode="median") * 1e3
        except Exception as e:  # one schedule failing (shared memory, a compiler error) is a row, not the end
            row["error"] = " ".join(str(e).split())[:300]
        print(json.dumps(row), flush=True)
        rows.append(row)
    if not smoke:
        write_probe(sys.argv[1], "tf32x3 schedules, gemm_bias_relu fp32", "tf32x3_probe.py", rows)


def write_probe(path: str, what: str, script: str, rows: list[dict]) -> None:
    """The probe's JSON (to `path`, the first argument): rows with the date, GPU, toolchain and command."""
    import torch
    import triton

    Path(path).write_text(json.dumps({
        "probe": what, "date": time.strftime("%Y-%m-%d"), "machine": torch.cuda.get_device_name(),
        "toolchain": f"torch {torch.__version__}, triton {triton.__version__}",
        "command": f"PYTHONPATH=src python3 benchmarks/{script} {' '.join(sys.argv[1:])}", "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
