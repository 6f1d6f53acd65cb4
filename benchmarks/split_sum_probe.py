"""Probe: the tool's whole-tensor split reduction (codegen/fused/split.py) over a grid of schedules, beside eager and
torch.compile, for one problem (default KernelBench level1 100_HingeLoss in bf16: mean(clamp(1 - p * t, 0)) over
32768 x 32768, t broadcast along the rows).

Why (issue #18 item 4): the generated kernel measured 913 us on the H200 (RBLOCK 2048, SPLIT 512, 8 warps; call 1 of
2026-12-03f) against torch.compile's 502 (floor ~480). The suspected cause, an integer division an element for the
broadcast coordinate (rindex % s2), is not what the ISA shows: cross-compiled for sm_90 (triton 3.6, CPU,
2026-12-03) the loop has ONE rem.s32 per thread per step (8 bf16 elements: Triton's axis analysis keeps the
coordinate contiguous, so it is computed once per vector) and both loads are ld.global.v4.b32; about 10
instructions an element. A form with the modulo once per tile ((start + roffset) % s2 + lanes) gave the same rem
count and lost the targets' vector width (eight ld.global.b16; Triton knows nothing of a scalar remainder's
divisibility), so it was not kept. What is left to test is latency hiding: 512 programs of 8 warps are ~3.9 per SM
(31 warps of 64), each thread with 32 bytes in flight a step. This script times the generated module at SPLIT 512
and 1024 (the space's most: 8 per CU), RBLOCK 2048 to 8192 and num_stages 1 and 3, so one GPU run says which knob
closes the gap (then the search space or the cost model is what to change, not the codegen). The bench row's
search (gpu_calls/session_2026-12-03f_call3.sh) tried 3 candidates.

Each line: the module's output against the float64 reference (relative error), CUDA-event median of >= 20 reps
with L2 flushed (longrow_probe.py's timer), registers and spills from Triton's cache. --out JSON is rewritten after
every line ("complete": false until the end); lines not started within --max-wall (90 s) are skipped.

    PYTHONPATH=src python3 benchmarks/split_sum_probe.py --out $OUT/split_sum.json     # H200: ~40 s predicted
    PYTHONPATH=src python3 benchmarks/split_sum_probe.py --problem benchmarks/work/hinge/100_HingeLoss.py ...
    PYTHONPATH=src python3 benchmarks/split_sum_probe.py --sources-only --out x.json   # no GPU: the sources
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ROOT.parent / "shared" / "kernelbench" / "level1" / "100_HingeLoss.py"
# (SPLIT, RBLOCK, num_warps, num_stages): the bench's pick first (913 us; its search tried 3 candidates), then one
# knob or two at a time. Cross-compiled for sm_90 (bf16 100_HingeLoss, triton 3.6, CPU, 2026-12-03; predicted):
# RBLOCK 2048 x 8 warps 32 registers, 4096 x 8 40, 8192 x 16 48, 2048 x 4 40, no spills, every load
# ld.global.v4.b32, one rem.s32 per 8 elements; num_stages 3 gives the same PTX (no cp.async: nothing to
# pipeline), kept once as a control. SPLIT 2048 and 4096 are past the search space's 8 programs per CU.
GRID = ((512, 2048, 8, 1), (1024, 2048, 8, 1), (2048, 2048, 8, 1), (4096, 2048, 8, 1), (512, 4096, 8, 1),
        (1024, 4096, 8, 1), (1024, 8192, 16, 1), (1024, 2048, 4, 1), (2048, 2048, 4, 1), (512, 2048, 8, 3))


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def knobs_of(split: int, rblock: int, warps: int, stages: int) -> dict:
    return {"XBLOCK": 1, "RBLOCK": rblock, "SPLIT": split, "persistent": False, "num_warps": warps,
            "num_stages": stages}


@functools.cache
def _planned(problem: Path, dtype: str | None):
    """(ProblemSpec, Generalized, Plan) of the problem, captured once."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    spec = load_problem(problem, dtype)
    _, gen = capture_generalized(spec)
    return spec, gen, plan_fusion(gen.graph, FAMILIES)


def tool_source(problem: Path, dtype: str | None, knobs: dict) -> str:
    """The generated module (kernel.py text) of `problem` with its reduction group at `knobs`."""
    from kerntailor.codegen import default_schedule, generate_module

    spec, gen, plan = _planned(problem, dtype)
    schedules = {g.name: default_schedule(gen, g).retune(knobs if g.family == "reduction" else {})
                 for g in plan.groups}
    return generate_module(spec, gen, plan, schedules, "h200", "sm_90").source


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default=str(PROBLEM))
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="bf16")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--max-wall", type=float, default=90.0)
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out (its compile takes ~20 s)")
    ap.add_argument("--sources-only", action="store_true", help="no GPU: write the generated sources to --out")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    problem, dtype = Path(args.problem), None if args.dtype == "fp32" else args.dtype
    if not problem.is_file():
        print(f"split_sum_probe: no problem file {problem} (--problem)", file=sys.stderr)
        return 2
    if args.sources_only:
        sources = {" ".join(map(str, g)): tool_source(problem, dtype, knobs_of(*g)) for g in GRID}
        if args.out:
            Path(args.out).write_text(json.dumps({"label": "generated sources (not run)", "sources": sources}))
        print("\n".join(f"SPLIT RBLOCK warps stages {k}: {len(v)} characters" for k, v in sources.items()))
        return 0

    import torch
    import triton

    if not torch.cuda.is_available():
        print("no CUDA GPU: --sources-only writes the generated sources without one", file=sys.stderr)
        return 2
    from kerntailor.problem import load_problem

    probe = _module("longrow_probe", ROOT / "benchmarks" / "longrow_probe.py")
    coop = _module("coop_probe", ROOT / "benchmarks" / "coop_probe.py")
    spec = load_problem(problem, dtype)
    inputs = spec.make_inputs("default", "cuda", seed=0)
    model = spec.make_model("default", "cuda", seed=0)
    with torch.no_grad():
        ref = spec.make_model("default", "cuda", seed=0).double()(*[x.double() for x in inputs]).double()
    where = torch.cuda.get_device_name(0)
    print(f"measured on {where}; torch {torch.__version__}, triton {triton.__version__}; {problem.name} "
          f"{args.dtype}; inputs {[tuple(x.shape) for x in inputs]}", flush=True)
    results, began, reps = [], time.perf_counter(), max(20, args.reps)

    def save(complete: bool) -> None:
        if args.out:
            Path(args.out).write_text(json.dumps(
                {"label": f"measured on {where}", "torch": torch.__version__, "triton": triton.__version__,
                 "problem": problem.name, "dtype": args.dtype, "reps": reps, "complete": complete,
                 "wall_s": round(time.perf_counter() - began, 1), "timer": "CUDA events, median, L2 flushed",
                 "results": results}, indent=1))

    todo = [(f"T tool SPLIT {s} RBLOCK {r} warps {w} stages {st}", (s, r, w, st)) for s, r, w, st in GRID]
    todo += [("eager", "eager")] + ([] if args.no_compile else [("torch.compile", "compile")])
    for name, what in todo:
        row = {"variant": name}
        if time.perf_counter() > began + args.max_wall:
            results.append(row | {"error": "skipped: past --max-wall"})
            print(name, "skipped: past --max-wall", flush=True)
            continue
        try:
            if isinstance(what, tuple):
                source = tool_source(problem, dtype, knobs_of(*what))
                module = coop._load(source, "split_sum_" + "_".join(map(str, what)))

                def call(m=module):
                    return m._launch_kernels(*inputs)
            else:
                fn = model if what == "eager" else torch.compile(model)

                def call(f=fn):
                    with torch.no_grad():
                        return f(*inputs)
            y = call()
            torch.cuda.synchronize()
            if isinstance(what, tuple):
                row.update(coop._registers(module))
            row["rel_err"] = float(((y.double() - ref).norm() / ref.norm()).item())
            row["time_us"] = round(probe.bench_us(call, reps), 1)
        except Exception as exc:   # noqa: BLE001  (a probe reports a failed line and goes on)
            row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        results.append(row)
        print(f"{name:45s} {row.get('time_us', '-'):>9} us err {row.get('rel_err', '-')} regs {row.get('regs', '-')} "
              f"spills {row.get('spills', '-')} {row.get('error', '')}", flush=True)
        save(False)
    print(f"wall {time.perf_counter() - began:.0f} s", flush=True)
    save(True)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
