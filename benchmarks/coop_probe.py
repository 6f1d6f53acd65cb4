"""Probe (issue #18 item 3): the TOOL's generated cooperative split-row kernel beside the probe's P4 and P1.

benchmarks/longrow_probe.py's P4 (96 programs a row of 4096 elements, 32 registers, one read) ran softmax over
4096 x 393,216 at 3746 us fp32 on the H200 (1.24x the copy); the kernel codegen/fused/splitrows.py generated for
COOP = 1 at the search's seed then (SPLIT 128, a chunk loop, 80 registers on sm_90) ran 9430 us. The generator now
writes one tile a program, no loop, the masked lanes loaded as the max's identity (40 registers cross-compiled on
sm_90 for fp32, 48 for bf16) and the seed is SPLIT = ceil(R / 4096) = 96. This script times, on one CUDA GPU and
for fp32 and bf16:

- P0  copy (the floor every line is divided by), P1 two kernels (recip), P4 cooperative (recip, reuse):
      longrow_probe.py's kernels, unchanged (imported from it);
- T   the tool's module for softmax over dim 1 (tests/data/codegen_fused/tiny_softmax.py: its kernels take the
      sizes at run time) generated at each schedule of --schedules: the cooperative seed of this GPU's SM count
      (cooperative_seed) as codegen emits it now ("coop": phase A's exp(x - tile max) kept and rescaled, as P4
      does; codegen/fused/reuse.py), and three edits of that text: "coop-recompute", the exp recomputed per element
      in phase B (the kernel before the reuse: 4019 us fp32, 3421 bf16 on the H200, 2026-12-03f), "coop-maxnreg40"
      and "coop-maxnreg32", the launch capped at 40 / 32 registers a thread (cross-compiled sm_90: the reuse
      kernel takes 48 fp32 and 40 bf16 uncapped, 5 and 6 blocks of 256 threads an SM; 40 fits without spills,
      32 spills 56 / 36 bytes; P4 takes 32: 8 blocks). Also "coop-pow2" (SPLIT 128, 32 programs a row empty) and
      "windowed" (windowed_schedule) on request. Each is checked against torch.softmax like the P lines, and its
      kernel's registers and spills read from Triton's cache after the first call.

Same timer as longrow_probe.py (CUDA events, median of >= 20 reps, L2 flushed by a 256 MB write before each).
Output: one line per variant and --out JSON rewritten after every line ("complete": false until the end).
Variants not started within --max-wall (90 s) are skipped. Predicted wall: ~50 s at the default size.

    PYTHONPATH=src python3 benchmarks/coop_probe.py --out $OUT/coop.json        # H200: 4096 x 393216, fp32 + bf16
    PYTHONPATH=src python3 benchmarks/coop_probe.py --dtype fp32 --schedules coop   # only the seed's kernel
    PYTHONPATH=src python3 benchmarks/coop_probe.py --schedules coop,coop-pow2,windowed   # the older lines
    PYTHONPATH=src python3 benchmarks/coop_probe.py --sources-only --out x.json  # no GPU: the generated sources
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ROOT / "tests" / "data" / "codegen_fused" / "tiny_softmax.py"   # softmax over dim 1, sizes at run time
DTYPES = {"fp32": "float32", "bf16": "bfloat16"}


def _probe_module():
    """benchmarks/longrow_probe.py as a module (its kernels, timer and checks)."""
    spec = importlib.util.spec_from_file_location("longrow_probe", ROOT / "benchmarks" / "longrow_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tool_schedules(cols: int, n_sm: int, warp_size: int = 32) -> dict[str, dict]:
    """{label: reduction knobs}: the cooperative seed for a GPU of n_sm SMs, the same tile at SPLIT a power of two
    (the old shape), and the windowed default."""
    from dataclasses import replace

    from kerntailor.codegen.fused import windowed_schedule
    from kerntailor.search.families import cooperative_seed
    from kerntailor.targets import get_target

    target = replace(get_target("h200"), compute_units=n_sm, warp_size=warp_size)
    seed = cooperative_seed(target, R=cols)
    out = {}
    if seed:
        out["coop"] = seed
        for edit in EDITS:
            out[f"coop-{edit}"] = seed
        pow2 = 1 << (seed["SPLIT"] - 1).bit_length()
        if pow2 != seed["SPLIT"] and pow2 <= n_sm:
            out["coop-pow2"] = dict(seed, SPLIT=pow2)
    out["windowed"] = {k: v for k, v in windowed_schedule(cols).knob_values().items() if v is not None}
    return out


@functools.cache
def _planned(dtype: str):
    """(ProblemSpec, Generalized, Plan) of softmax over dim 1 in `dtype`, captured once."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    spec = load_problem(PROBLEM, None if dtype == "fp32" else dtype)
    _, gen = capture_generalized(spec)
    return spec, gen, plan_fusion(gen.graph, FAMILIES)


def tool_source(dtype: str, knobs: dict) -> str:
    """The generated module (kernel.py text) of softmax over dim 1 in `dtype` under reduction `knobs`."""
    from kerntailor.codegen import default_schedule, generate_module

    spec, gen, plan = _planned(dtype)
    schedules = {g.name: default_schedule(gen, g).retune(knobs if g.family == "reduction" else {})
                 for g in plan.groups}
    return generate_module(spec, gen, plan, schedules, "h200", "sm_90").source


EDITS = ("recompute", "maxnreg40", "maxnreg32")   # edits of the "coop" module's text (edited_source)


def edited_source(source: str, edit: str) -> str:
    """The generated module with one edit: "recompute" writes phase B's exp(x - max) per element again instead of
    phase A's kept exponentials rescaled (each `v_E = ex_S * scale_S` line back to `tl.exp(x_M - v_M)`, x_M the
    max's input as phase A named it); "maxnregN" caps the cooperative kernel's launch at N registers a thread.
    Raises ValueError where the text has nothing to edit (the probe then reports the line as an error)."""
    import re

    if edit == "recompute":
        maxes = dict(re.findall(r"scale_(\w+) = tl\.where\(\(tmax_(\w+) ==", source))   # {S: M}

        def back(match):
            return f"{match.group(1)} = tl.exp(x_{maxes[match.group(2)]} - v_{maxes[match.group(2)]})  # recomputed"
        edited, n = re.subn(r"(v_\w+) = ex_(\w+) \* scale_\2\b.*", back, source)
    elif edit.startswith("maxnreg"):
        edited, n = re.subn(r"(k0_reduction_kernel\[.*num_warps=\d+)", rf"\1, maxnreg={int(edit[7:])}", source)
    else:
        raise ValueError(f"unknown edit {edit!r}: one of {EDITS}")
    if not n:
        raise ValueError(f"nothing to edit for {edit!r} in the generated module")
    return edited


def variant_source(dtype: str, label: str, knobs: dict) -> str:
    """tool_source at `knobs`, edited where `label` names an edit (coop-recompute, coop-maxnreg40, ...)."""
    source = tool_source(dtype, knobs)
    edit = label.removeprefix("coop-")
    return edited_source(source, edit) if edit in EDITS else source


def _load(source: str, name: str):
    path = Path(tempfile.mkdtemp(prefix="coop_probe_")) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _registers(module) -> dict:
    """Registers and spills of the module's jit kernels, from Triton's cache (after a launch); {} if unreadable."""
    import triton

    regs, spills = [], []
    for name in sorted(vars(module)):
        fn = getattr(module, name)
        if not isinstance(fn, triton.runtime.JITFunction):
            continue
        try:
            for cache in fn.device_caches.values():
                for kernel in cache[0].values():
                    regs.append(kernel.n_regs)
                    spills.append(kernel.n_spills)
        except (AttributeError, IndexError, TypeError):
            return {}
    return {"regs": regs, "spills": spills} if regs else {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=393216)
    ap.add_argument("--dtype", choices=["fp32", "bf16", "both"], default="both")
    ap.add_argument("--schedules", default="coop,coop-recompute,coop-maxnreg40,coop-maxnreg32",
                    help="tool schedules (tool_schedules' labels)")
    ap.add_argument("--no-probe", action="store_true", help="only P0 and the tool's lines")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--max-wall", type=float, default=90.0)
    ap.add_argument("--sources-only", action="store_true", help="no GPU: write the generated sources to --out")
    ap.add_argument("--sm", type=int, default=132, help="SM count for --sources-only (the GPU's, when timed)")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    dtypes = ["fp32", "bf16"] if args.dtype == "both" else [args.dtype]
    wanted = [s.strip() for s in args.schedules.split(",") if s.strip()]

    if args.sources_only:
        schedules = tool_schedules(args.cols, args.sm)
        report = {"label": "generated sources (not run)", "schedules": schedules,
                  "sources": {f"{d} {label}": variant_source(d, label, schedules[label]) for d in dtypes
                              for label in wanted if label in schedules}}
        if args.out:
            Path(args.out).write_text(json.dumps(report, indent=1))
        print("\n".join(f"{k}: {len(v)} characters" for k, v in report["sources"].items()))
        return 0

    import torch
    import triton

    if not torch.cuda.is_available():
        print("no CUDA GPU: --sources-only writes the generated sources without one", file=sys.stderr)
        return 2
    probe = _probe_module()
    props = torch.cuda.get_device_properties(0)
    n_sm, where = props.multi_processor_count, torch.cuda.get_device_name(0)
    schedules = tool_schedules(args.cols, n_sm)
    rows, cols, reps = args.rows, args.cols, max(20, args.reps)
    print(f"measured on {where}; torch {torch.__version__}, triton {triton.__version__}; {rows} x {cols}; "
          f"tool schedules {schedules}", flush=True)
    results, began = [], time.perf_counter()

    def save(complete: bool) -> None:
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"label": f"measured on {where}", "torch": torch.__version__, "triton": triton.__version__,
                           "sm_count": n_sm, "rows": rows, "cols": cols, "reps": reps, "complete": complete,
                           "schedules": schedules, "wall_s": round(time.perf_counter() - began, 1),
                           "timer": "CUDA events, median, L2 flushed (256 MB)", "results": results}, f, indent=1)

    for dtype in dtypes:
        torch_dtype = getattr(torch, DTYPES[dtype])
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(rows, cols, device="cuda", generator=gen).to(torch_dtype)
        ref = torch.softmax(x.float(), dim=1)
        ref_max = float(ref.max())
        bytes_moved = 2 * x.numel() * x.element_size()
        cfg = probe.coop_configs(cols, n_sm, smoke=False)[0]
        split_cfg = {"split": 128, "xblock": 1, "rblock": 1024, "warps": 8}
        todo = [("P0 copy BLOCK 4096 warps 8", lambda a, b: probe.run_copy(a, b, 4096, 8), "copy"),
                ("P0 torch copy_", lambda a, b: b.copy_(a), "copy")]
        if not args.no_probe:
            todo += [(f"P1 two kernels recip {probe._label(split_cfg)}",
                      lambda a, b: probe.run_two_kernels(a, b, split_cfg, probe.RECIP), "check"),
                     (f"P4 cooperative recip BLOCK {cfg['block']} SPLIT {math.ceil(cols / cfg['block'])} warps "
                      f"{cfg['warps']}", lambda a, b: probe.run_coop(a, b, cfg, probe.RECIP), "check"),
                     (f"P4 cooperative reuse BLOCK {cfg['block']} SPLIT {math.ceil(cols / cfg['block'])} warps "
                      f"{cfg['warps']}", lambda a, b: probe.run_coop(a, b, cfg, probe.REUSE), "check")]
        modules = {}
        for label in wanted:
            if label in schedules:
                knobs = schedules[label]
                name = f"T tool {label} " + " ".join(f"{k} {v}" for k, v in knobs.items() if k != "persistent")
                todo.append((name, (dtype, label), "tool"))
        floor = None
        for name, fn, kind in todo:
            row = {"variant": name, "dtype": DTYPES[dtype], "rows": rows, "cols": cols}
            if time.perf_counter() > began + args.max_wall:
                results.append(row | {"error": "skipped: past --max-wall"})
                print(name, "skipped: past --max-wall", flush=True)
                continue
            try:
                if kind == "tool":
                    d, label = fn
                    name_ = f"tool_{d}_{label}".replace("-", "_")
                    module = modules.get(fn) or _load(variant_source(d, label, schedules[label]), name_)
                    modules[fn] = module
                    y = module._launch_kernels(x)
                    torch.cuda.synchronize()
                    row.update(_registers(module))

                    def call(m=module, a=x):
                        return m._launch_kernels(a)
                else:
                    y = torch.full_like(x, float("nan"))
                    row.update(probe._compiled(fn(x, y)))
                    torch.cuda.synchronize()

                    def call(f=fn, a=x, out=y):
                        return f(a, out)
                if kind == "copy":
                    row["copy_exact"] = bool(torch.equal(x, y))
                else:
                    err = probe.max_error(y, ref)
                    row.update(max_abs_err=err, err_over_max=err / ref_max)
                t = probe.bench_us(call, reps)
                if kind == "copy" and row["copy_exact"]:
                    floor = min(t, floor or t)
                row.update(time_us=round(t, 1), gb_s=round(bytes_moved / t / 1e3, 1),
                           over_floor=round(t / floor, 3) if floor else None)
            except Exception as exc:   # noqa: BLE001  (a probe reports a failed variant and goes on)
                row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
            results.append(row)
            print(f"{dtype:5s} {name:90s} {row.get('time_us', '-'):>9} us x{row.get('over_floor') or 0:5.2f} "
                  f"err {row.get('err_over_max', '-')} regs {row.get('regs', '-')} spills {row.get('spills', '-')} "
                  f"{row.get('error', '')}", flush=True)
            save(False)
        del x, ref
        torch.cuda.empty_cache()
    print(f"wall {time.perf_counter() - began:.0f} s", flush=True)
    save(True)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
