"""Probe (issue #18 item 2): reductions over a strided axis (max, argmin, sum over dim 1 of (128, 4096, 4095)) under
several schedules of the kernel kerntailor's codegen emits, beside eager, torch.compile and the memory floor.

Why: on the H200 (BENCHMARKS.md, session 2026-12-03f) bf16 argmin over the middle axis ran at 1850 us against a
956 us floor (1.93x), bf16 max lost to torch.compile, while fp32 sat near its floor (1.09x). Rows of 4095 elements
are not 16-byte aligned, so every load is scalar; cross-compiled for sm_90 (triton 3.6.0, CPU, 2026-12-04) the old
default tile (64 rows x 64 on 8 warps, 2 warps across the rows) took 89 registers for bf16 argmin (2 programs an
SM: 16 warps x 16 two-byte loads = 16 KB in flight an SM, fp32 twice that) and 18.5 SASS instructions an element.
The tile this probe was written for (256 rows x 16 on 8 warps, every warp across the rows) takes 48 registers
(5 programs an SM, 40 KB in flight) and 10.4 instructions an element, predicted better. Measured on the H200
(2026-12-04e call 3, data in benchmarks/data/h200_2026-12-04e/call3) it lost to 64 x 64 on every case, so the
codegen default is 64 x 64 again ("default" and "XBLOCK 64 RBLOCK 64 warps 8" are now the same tile) and the search
seeds the measured winners (search/families.py strided_seeds).

Each line: the generated module's output against torch's (argmin: the indices equal torch.argmin's on the same
input, sum: relative error against a float64 sum, max: exact), its time by the project's stopwatch
(kerntailor.measure.stopwatch.measure: interleaved with eager and torch.compile, L2 flushed before every run,
median), registers and spills from Triton's cache, and x over the floor (the bytes read and written at the
measured read and write bandwidths, kerntailor.measure.ceilings). Writes DIR/strided_probe.json (rewritten after
every case, "complete": false until the end) and DIR/strided_probe.md. Cases not started within --max-wall (200 s)
are skipped, so the run stays under 240 s on one H200 (predicted ~150 s: compiles dominate).

    PYTHONPATH=src python3 benchmarks/strided_probe.py $OUT/strided            # H200: bf16 and fp32, ~150 s
    PYTHONPATH=src python3 benchmarks/strided_probe.py $OUT/strided --no-compile --dtype bf16
    PYTHONPATH=src python3 benchmarks/strided_probe.py /tmp/strided --smoke    # CPU, interpreter, tiny, no times

--rows short (issue #18, 2026-12-05): the other end, many short contiguous rows (sum and max over the last axis of
(2^21, 16), (2^19, 64) and (2^24, 2)) at 1 to 256 rows a program, to measure what the analytical model's
bytes-in-flight term (costmodel/analytical.py, inflight_penalty) predicts: 62_Matmul_GroupNorm's norm (524,288
rows of 16) was predicted as fast at one row a program on one warp (64 B in flight a program) as at 64 rows.

    PYTHONPATH=src python3 benchmarks/strided_probe.py $OUT/short --rows short --no-compile   # H200, ~120 s
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS = {"max": "torch.amax(x, dim=1)", "argmin": "torch.argmin(x, dim=1)", "sum": "torch.sum(x, dim=1)"}
SHAPE, ALIGNED, SMOKE_SHAPE = (128, 4096, 4095), (128, 4096, 4096), (3, 37, 45)
# (XBLOCK, RBLOCK, num_warps): the default tile, then the tiles with every warp across the rows
OLD = (64, 64, 8)
ALTERNATIVES = ((256, 32, 8), (128, 16, 4), (128, 32, 4), (512, 16, 8), (256, 8, 8))
SHORT_SHAPES, SMOKE_SHORT = ((1 << 21, 16), (1 << 19, 64), (1 << 24, 2)), ((515, 16), (129, 64), (2051, 2))
SHORT_TILES = ((1, 1), (4, 1), (16, 1), (64, 1), (64, 4), (64, 8), (256, 8))   # (rows a program, warps)
PROBLEM = '''"""{op} over dim 1 of {shape} (strided_probe.py)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {expr}


def get_inputs():
    return [torch.rand{shape}]


def get_init_inputs():
    return []
'''


def cases(smoke: bool, dtypes: list[str], rows: str = "strided") -> list[tuple[str, str, tuple[int, ...], tuple]]:
    """(op, dtype, shape, schedules) in the order run: every op on the unaligned shape in each dtype, then the
    aligned shape in bf16 (old and new default only); `rows` "short": sum and max over each of SHORT_SHAPES' last
    axis at the default and SHORT_TILES (two of them under --smoke)."""
    if rows == "short":
        tiles = SHORT_TILES[::3] if smoke else SHORT_TILES
        return [(op, dtype, shape, ("default",) + tuple((x, shape[1], w) for x, w in tiles))
                for shape in (SMOKE_SHORT if smoke else SHORT_SHAPES) for dtype in dtypes for op in ("sum", "max")]
    shape = SMOKE_SHAPE if smoke else SHAPE
    alternatives = ALTERNATIVES[:2] if smoke else ALTERNATIVES
    todo = [(op, dtype, shape, ("default", OLD) + alternatives) for dtype in dtypes for op in OPS]
    if not smoke:
        todo += [(op, "bf16", ALIGNED, ("default", OLD)) for op in OPS]
    return todo


@functools.cache
def _planned(problem: Path, dtype: str):
    """(ProblemSpec, Generalized, Plan) of one problem file in one dtype, captured once for all its schedules."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    spec = load_problem(problem, None if dtype == "fp32" else dtype)
    _, gen = capture_generalized(spec)
    return spec, gen, plan_fusion(gen.graph, FAMILIES)


def module_source(problem: Path, dtype: str, schedule) -> tuple[str, str]:
    """(kernel.py text, the schedule's knobs as text) of `problem` with its reduction at `schedule` ("default": the
    codegen's own default; else (XBLOCK, RBLOCK, num_warps), looped unless RBLOCK covers the row)."""
    from kerntailor.codegen import default_schedule, generate_module

    spec, gen, plan = _planned(problem, dtype)
    schedules = {}
    for g in plan.groups:
        base = default_schedule(gen, g)
        if g.family == "reduction" and schedule != "default":
            xblock, rblock, warps = schedule
            r = g.space[g.reduce_axes[0]]
            base = base.retune({"XBLOCK": xblock, "RBLOCK": rblock, "num_warps": warps, "persistent": rblock >= r})
        schedules[g.name] = base
    knobs = "; ".join(f"{k} {v}" for s in schedules.values() for k, v in s.knobs().items())
    return generate_module(spec, gen, plan, schedules, "h200", "sm_90").source, knobs


def check(op: str, got, x, ref) -> dict:
    """The module's output against torch's: argmin and max exact, sum by relative error to a float64 sum."""
    import torch

    if op == "sum":
        exact = torch.sum(x, dim=1, dtype=torch.float64)
        return {"rel_err": float((got.double() - exact).norm() / exact.norm()), "ok": None}
    return {"ok": bool(torch.equal(got, ref))}


def registers(module) -> dict:
    """Registers and spills of the module's jit kernels (Triton's cache, after a launch); {} where unreadable."""
    import triton

    regs, spills = [], []
    for name in sorted(vars(module)):
        fn = getattr(module, name)
        if isinstance(fn, triton.runtime.JITFunction):
            for cache in getattr(fn, "device_caches", {}).values():
                for kernel in cache[0].values():
                    regs.append(getattr(kernel, "n_regs", None))
                    spills.append(getattr(kernel, "n_spills", None))
    return {"regs": regs, "spills": spills} if regs else {}


def run_case(op: str, dtype: str, shape: tuple[int, ...], schedules, workdir: Path, smoke: bool, compile_: bool,
             ceilings) -> list[dict]:
    """Every schedule of one case checked, then all of them timed interleaved with eager (and torch.compile)."""
    import torch

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import load_candidate

    device = "cpu" if smoke else "cuda"
    tdtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    problem = workdir / f"{op}_{'x'.join(map(str, shape))}.py"
    problem.write_text(PROBLEM.format(op=op, shape=shape, expr=OPS[op]))
    gen = torch.Generator(device=device).manual_seed(0)   # drawn on the GPU: 2.1e9 draws on the host take ~10 s
    x = torch.rand(shape, device=device, generator=gen).to(tdtype)
    ref = eval(OPS[op], {"torch": torch, "x": x})
    base = {"op": op, "dtype": dtype, "shape": list(shape)}
    rows, fns = [], {}
    for schedule in schedules:
        label = "default" if schedule == "default" else "XBLOCK {} RBLOCK {} warps {}".format(*schedule)
        row = dict(base, schedule=label)
        try:
            source, knobs = module_source(problem, dtype, schedule)
            row["knobs"] = knobs
            path = workdir / f"{problem.stem}_{dtype}_{label.replace(' ', '_')}.py"
            path.write_text(source)
            module = load_candidate(path, "strided")
            got = module._launch_kernels(x)
            row.update(check(op, got, x, ref), **({} if smoke else registers(module)))
            fns[label] = lambda inputs, m=module: m._launch_kernels(*inputs)
        except Exception as exc:   # noqa: BLE001  (a probe reports a failed line and goes on)
            row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        rows.append(row)
    if smoke:
        return rows
    from kerntailor.measure.stopwatch import measure

    model = eval(f"lambda x: {OPS[op]}", {"torch": torch})
    fns["eager"] = lambda inputs: model(*inputs)
    if compile_:
        fns["torch.compile"] = torch.compile(lambda inputs: model(*inputs))
    timings = measure(fns, [[x]], budget_s=1.0, min_runs=10, max_runs=60)
    out_bytes = ref.numel() * ref.element_size()
    floor_s = ceilings.memory_seconds(x.numel() * x.element_size() + out_bytes, x.numel() * x.element_size())
    for name in fns:
        row = next((r for r in rows if r["schedule"] == name), None)
        if row is None:
            row = dict(base, schedule=name)
            rows.append(row)
        t = timings[name]
        row.update(time_us=round(t.median_s * 1e6, 1), iqr_us=round(t.iqr_s * 1e6, 1), runs=t.runs,
                   floor_us=round(floor_s * 1e6, 1), over_floor=round(t.median_s / floor_s, 3))
    return rows


def markdown(results: list[dict], header: str) -> str:
    lines = [header, "", "| op | dtype | shape | schedule | knobs | us | x floor | check | regs |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        verdict = r.get("error") or (f"rel {r['rel_err']:.1e}" if "rel_err" in r else
                                     {True: "exact", False: "WRONG", None: ""}[r.get("ok")])
        lines.append(f"| {r['op']} | {r['dtype']} | {'x'.join(map(str, r['shape']))} | {r['schedule']} | "
                     f"{r.get('knobs', '')} | {r.get('time_us', '')} | {r.get('over_floor', '')} | {verdict} | "
                     f"{r.get('regs', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="directory for strided_probe.json, strided_probe.md and the modules")
    ap.add_argument("--dtype", default="bf16,fp32")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--max-wall", type=float, default=200.0, help="seconds; cases not started by then are skipped")
    ap.add_argument("--smoke", action="store_true", help="CPU under TRITON_INTERPRET=1, a tiny shape, no times")
    ap.add_argument("--rows", choices=("strided", "short"), default="strided",
                    help="strided: a middle axis reduced (the default); short: many short contiguous rows")
    args = ap.parse_args(argv)
    if args.smoke:
        os.environ["TRITON_INTERPRET"] = "1"   # before triton is imported (this process's only kernels)
    import torch
    import triton

    if not args.smoke and not torch.cuda.is_available():
        print("no CUDA GPU: --smoke runs the checks on the CPU under the interpreter", file=sys.stderr)
        return 2
    ceilings = None
    if not args.smoke:
        from kerntailor.measure.ceilings import load_ceilings

        ceilings = load_ceilings()
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = args.out / "modules"
    workdir.mkdir(exist_ok=True)
    where = "CPU (TRITON_INTERPRET=1, not timed)" if args.smoke else torch.cuda.get_device_name(0)
    header = (f"strided_probe on {where}; torch {torch.__version__}, triton {triton.__version__}; "
              f"{time.strftime('%Y-%m-%d')}; timer: kerntailor.measure.stopwatch (interleaved, L2 flushed, median)")
    print(header, flush=True)
    results, began = [], time.perf_counter()

    def save(complete: bool) -> None:
        doc = {"label": header, "complete": complete, "wall_s": round(time.perf_counter() - began, 1),
               "ceilings": None if ceilings is None else {"read_B_s": ceilings.read_bandwidth,
                                                          "write_B_s": ceilings.write_bandwidth,
                                                          "copy_B_s": ceilings.copy_bandwidth},
               "results": results}
        (args.out / "strided_probe.json").write_text(json.dumps(doc, indent=1))
        (args.out / "strided_probe.md").write_text(markdown(results, header))

    for op, dtype, shape, schedules in cases(args.smoke, args.dtype.split(","), args.rows):
        if time.perf_counter() - began > args.max_wall:
            results.append({"op": op, "dtype": dtype, "shape": list(shape), "schedule": "-",
                            "error": "skipped: past --max-wall"})
            continue
        rows = run_case(op, dtype, shape, schedules, workdir, args.smoke, not args.no_compile, ceilings)
        for r in rows:
            print(json.dumps(r), flush=True)
        results += rows
        save(False)
        if not args.smoke:
            torch.cuda.empty_cache()
    save(True)
    print(f"wall {time.perf_counter() - began:.0f} s", flush=True)
    bad = [r for r in results if r.get("error", "").split(":")[0] != "skipped" and "error" in r or r.get("ok") is False]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
