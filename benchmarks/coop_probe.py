"""Probe (issue #18): the TOOL's generated cooperative split-row kernel at each value of its knobs, beside the copy.

The cooperative softmax (codegen/fused/splitrows.py, COOP = 1) has two knobs the search times (search/families.py's
cooperative_knobs): REUSE, 1 keeping phase A's exp(x - tile max) for phase B (codegen/fused/reuse.py), 0 computing
exp(x - max) again per element, and, on NVIDIA, maxnreg, a cap on a thread's registers (0: none). The H200 measured
them as text edits of the generated module (benchmarks/data/h200_2026-12-03g/, 4096 x 393,216): fp32 reuse 4210 us
(48 registers), recompute 3986 (40), reuse capped at 40 3935; bf16 reuse 3067 (40), recompute 3449 (48), reuse at 32
2995; copy floor fp32 3141, bf16 1549. This script times, on one CUDA GPU, for fp32 and bf16:

- P0  copy (the floor every line is divided by): longrow_probe.py's copy kernel and torch's copy_;
- P1  two kernels, P4 cooperative (recip, reuse): longrow_probe.py's hand-written kernels, unless --no-probe;
- T   the tool's module for softmax over dim 1 (tests/data/codegen_fused/tiny_softmax.py: its kernels take the
      sizes at run time) as codegen emits it at each schedule of --schedules, all on the cooperative seed of this
      GPU's SM count and the dtype (cooperative_seed): "coop" (the seed: REUSE the dtype's default, no cap),
      "coop-reuse0" / "coop-reuse1" (REUSE set), "coop-reuse1-maxnreg40" (and any -maxnregN: the cap N, passed
      at launch). Also "coop-pow2" (SPLIT a power of two) and "windowed" (windowed_schedule) on request. Each is
      checked against torch.softmax like the P lines, and its kernel's registers and spills read from Triton's
      cache after the first call.

Same timer as longrow_probe.py (CUDA events, median of >= 20 reps, L2 flushed by a 256 MB write before each).
Output: one line per variant and --out JSON rewritten after every line ("complete": false until the end).
Variants not started within --max-wall (90 s) are skipped. Predicted wall with --no-probe: ~45 s (16 lines).

    PYTHONPATH=src python3 benchmarks/coop_probe.py --no-probe --out $OUT/coop.json   # REUSE x maxnreg, fp32 + bf16
    PYTHONPATH=src python3 benchmarks/coop_probe.py --dtype fp32 --schedules coop      # only the seed's kernel
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


def tool_schedules(cols: int, n_sm: int, dtype: str, labels=(), warp_size: int = 32) -> dict[str, dict]:
    """{label: reduction knobs} for `labels` (and "coop"): the cooperative seed for a GPU of n_sm SMs in `dtype`,
    with REUSE and maxnreg as a "coop-reuseR[-maxnregN]" label says; "coop-pow2", the seed's tile at SPLIT a power of
    two; "windowed", the windowed default. A label it cannot read is a ValueError."""
    import re
    from dataclasses import replace

    from kerntailor.codegen.fused import windowed_schedule
    from kerntailor.search.families import cooperative_seed
    from kerntailor.targets import get_target

    target = replace(get_target("h200"), compute_units=n_sm, warp_size=warp_size)
    seed = cooperative_seed(target, R=cols, dtype=dtype)
    out = {}
    for label in ("coop",) + tuple(labels):
        knob = re.fullmatch(r"coop-reuse([01])(?:-maxnreg(\d+))?", label)
        if label == "windowed":
            out[label] = {k: v for k, v in windowed_schedule(cols).knob_values().items() if v is not None}
        elif not seed:
            continue
        elif label == "coop":
            out[label] = seed
        elif knob:
            out[label] = dict(seed, REUSE=int(knob.group(1)), maxnreg=int(knob.group(2) or 0))
        elif label == "coop-pow2":
            pow2 = 1 << (seed["SPLIT"] - 1).bit_length()
            if pow2 != seed["SPLIT"] and pow2 <= n_sm:
                out[label] = dict(seed, SPLIT=pow2)
        else:
            raise ValueError(f"unknown schedule {label!r}: coop, coop-reuse0, coop-reuse1-maxnreg40, coop-pow2, "
                             f"windowed")
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


DEFAULT_SCHEDULES = ",".join(f"coop-reuse{r}" + (f"-maxnreg{n}" if n else "") for n in (0, 40, 32) for r in (0, 1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=393216)
    ap.add_argument("--dtype", choices=["fp32", "bf16", "both"], default="both")
    ap.add_argument("--schedules", default=DEFAULT_SCHEDULES, help="tool schedules (tool_schedules' labels)")
    ap.add_argument("--no-probe", action="store_true", help="only P0 and the tool's lines")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--max-wall", type=float, default=90.0)
    ap.add_argument("--sources-only", action="store_true", help="no GPU: write the generated sources to --out")
    ap.add_argument("--sm", type=int, default=132, help="SM count for --sources-only (the GPU's, when timed)")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    dtypes = ["fp32", "bf16"] if args.dtype == "both" else [args.dtype]
    wanted = [s.strip() for s in args.schedules.split(",") if s.strip()]
    try:
        tool_schedules(args.cols, args.sm, dtypes[0], wanted)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2

    if args.sources_only:
        schedules = {d: tool_schedules(args.cols, args.sm, d, wanted) for d in dtypes}
        report = {"label": "generated sources (not run)", "schedules": schedules,
                  "sources": {f"{d} {label}": tool_source(d, schedules[d][label]) for d in dtypes
                              for label in wanted if label in schedules[d]}}
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
    schedules = {d: tool_schedules(args.cols, n_sm, d, wanted) for d in dtypes}
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
            if label in schedules[dtype]:
                knobs = schedules[dtype][label]
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
                    module = modules.get(fn) or _load(tool_source(d, schedules[d][label]), name_)
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
