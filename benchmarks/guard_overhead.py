"""Per-call host overhead of a generated module: ModelNew.forward against its custom op and its bare launches.

    PYTHONPATH=src python3 benchmarks/guard_overhead.py --target h200 \\
        --out benchmarks/data/guard_overhead_h200_<date>.json [--only relu] [--iters 2000] [--repeats 7]

kernel.py's forward() checks its inputs in Python (ranks, dtypes, devices, sizes, the ranges its schedule supports;
#17 item 1), then calls one torch.library custom op (#17 item 4) whose implementation makes the tensors contiguous,
allocates and launches. For a few problems of problems/ (relu, layernorm, softmax, a square GEMM) at each variant
of the problem (the default shape, where the kernels dominate, and the smaller ones, where the host does), this
times, under torch.no_grad, side by side in one process:
- forward:   ModelNew.forward (checks + launches: in eager it calls the op's function, the op itself only while
             torch.compile traces, since 2026-12-05; before, checks + the op through the dispatcher + launches);
- op:        torch.ops.kerntailor.<name>(...) with the tensors forward() hands it (dispatcher + launches);
- launches:  the op's implementation, kernel.py's `_launch_kernels`, called directly (the bare host lines);
- reference: the problem's Model (PyTorch eager).
Each is called up to `--iters` times (fewer where a loop of all four would pass 50 ms) back to back between two
CUDA events (per-call time: the device's when it is the bottleneck, the host's when launches are cheaper than the
Python that issues them); the host's own time per call (perf_counter over the same loop, before the
synchronisation) is recorded beside it. The four alternate within each of `--repeats` rounds, in a rotating order,
so drift falls on all alike; the median round is reported.

On a machine without a GPU (Triton's interpreter) no time is meaningful: the script builds each module, checks that
forward, op and launches give the same outputs (on the last variant, a small one), and writes "not meaningful on
CPU/interpreter" in place of numbers. It exits 1 if any of the three differ.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ["problems/level1/relu.py", "problems/level1/layernorm.py", "problems/level1/softmax_short_rows.py",
            "problems/level1/matmul_square.py"]


def _generate(problem, target) -> str:
    """kernel.py of `problem` for `target`: every group under its default schedule (no search)."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule, generate_module
    from kerntailor.plan import plan_fusion

    _, gen = capture_generalized(problem)
    plan = plan_fusion(gen.graph, FAMILIES)
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    return generate_module(problem, gen, plan, schedules, target.name, target.arch).source


def _load(source: str, folder: Path, name: str):
    import importlib.util

    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _op_call(kernel, model, inputs):
    """(the custom op, the arguments forward() hands it): in eager forward() calls the op's function,
    `_launch_kernels`, itself (codegen/customop.call_lines), so the arguments are seen there, during one forward()."""
    import re

    import torch

    calls = []
    original = kernel._launch_kernels
    kernel._launch_kernels = lambda *a: calls.append(a) or original(*a)
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        kernel._launch_kernels = original
    if len(calls) != 1:
        raise RuntimeError(f"forward() called _launch_kernels {len(calls)} times, not once")
    name = re.search(r"torch\.ops\.kerntailor\.(\w+)", kernel.__doc__).group(1)
    return getattr(torch.ops.kerntailor, name).default, calls[0]


def _time(fns: dict, iters: int, repeats: int) -> dict:
    """Median over rounds of the per-call device-event time and host time (µs) of each function."""
    import torch

    for fn in fns.values():   # warm-up: Triton compiles, the allocator fills its cache
        for _ in range(10):
            fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()   # at most `iters` calls, and about 50 ms for a loop of all four
    for fn in fns.values():
        for _ in range(10):
            fn()
    torch.cuda.synchronize()
    all_four = (time.perf_counter() - t0) / 10
    iters = max(10, min(iters, int(0.05 / max(all_four, 1e-9))))
    names, rounds = list(fns), {n: [] for n in fns}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = fns[name]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            host = time.perf_counter() - t0
            end.record()
            torch.cuda.synchronize()
            rounds[name].append((start.elapsed_time(end) * 1e3 / iters, host * 1e6 / iters))
    out = {}
    for name, values in rounds.items():
        out[name] = {"iters": iters, "us_per_call": statistics.median(v[0] for v in values),
                     "host_us_per_call": statistics.median(v[1] for v in values),
                     "spread_us": [min(v[0] for v in values), max(v[0] for v in values)]}
    return out


def _same(a, b) -> bool:
    import torch

    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="", help="the target the kernels are generated for (default: this GPU's; "
                                                 "h200 without one)")
    ap.add_argument("--only", default="", help="only the problems whose path contains this")
    ap.add_argument("--iters", type=int, default=2000, help="calls between two events, at most")
    ap.add_argument("--repeats", type=int, default=7, help="rounds (the median is reported)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()

    import torch

    from kerntailor.problem import load_problem
    from kerntailor.store import toolchain_fingerprint
    from kerntailor.targets.lookup import detect_local_target, get_target

    gpu = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
    if not gpu:
        os.environ["TRITON_INTERPRET"] = "1"   # before any kernel.py is imported: triton.jit reads it then
    device = "cuda" if gpu else "cpu"
    target = get_target(args.target) if args.target else (detect_local_target() if gpu else None) or get_target("h200")
    rows = []
    with tempfile.TemporaryDirectory(prefix="guard-overhead-") as tmp:
        for i, path in enumerate(p for p in PROBLEMS if args.only in p):
            problem = load_problem(ROOT / path)
            kernel = _load(_generate(problem, target), Path(tmp), f"guard_overhead_{i}")
            variants = [v.name for v in problem.variants] if gpu else [problem.variants[-1].name]
            for variant in variants:
                reference = problem.make_model(variant, device, seed=0)
                new = kernel.ModelNew(*problem.init_inputs(variant)).to(device)
                new.load_state_dict(reference.state_dict())
                inputs = problem.make_inputs(variant, device, seed=0)
                op, op_args = _op_call(kernel, new, inputs)
                fns = {"forward": lambda new=new, inputs=inputs: new(*inputs),
                       "op": lambda op=op, args=op_args: op(*args),
                       "launches": lambda kernel=kernel, args=op_args: kernel._launch_kernels(*args),
                       "reference": lambda reference=reference, inputs=inputs: reference(*inputs)}
                row = {"problem": problem.name, "variant": variant,
                       "shapes": [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)],
                       "op": str(op)}
                with torch.no_grad():
                    outs = {name: fn() for name, fn in fns.items()}
                    row["same_outputs"] = all(_same(outs["forward"], outs[n]) for n in ("op", "launches"))
                    if gpu:
                        row["timings"] = _time(fns, args.iters, args.repeats)
                    else:
                        row["timings"] = "not meaningful on CPU/interpreter"
                rows.append(row)
                t = row["timings"]
                line = " ".join(f"{n} {t[n]['us_per_call']:8.2f} us ({t[n]['host_us_per_call']:6.2f} host)"
                                for n in fns) if gpu else t
                print(f"{problem.name:<20} {variant:<8} same={row['same_outputs']}  {line}", flush=True)
    doc = {"command": "python3 " + " ".join(sys.argv),
           "machine": {"host": platform.node(), "cpus": os.cpu_count(),
                       "device": torch.cuda.get_device_name() if gpu else "cpu (Triton interpreter)"},
           "toolchain": toolchain_fingerprint(gpu).to_dict(),
           "commit": _git("rev-parse", "--short", "HEAD"), "dirty": bool(_git("status", "--porcelain")),
           "date": datetime.datetime.now().isoformat(timespec="seconds"), "target": target.name,
           "iters": args.iters, "repeats": args.repeats, "meaningful": gpu, "rows": rows}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    return 0 if all(r["same_outputs"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
