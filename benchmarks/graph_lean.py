"""Graph mode's own cost, no kernel swapped: a model's eager forward against the graph graph mode runs in its place.

    PYTHONPATH=src python3 benchmarks/graph_lean.py problems/models/llama3_2_1b_decode.py --dtype bf16 \\
        --out benchmarks/data/graph_lean_h200_<date>.json [--variant default] [--iters 20] [--repeats 7]

optimize's graph mode (optimizing/graph.py) replaces the model's forward by the exported core-ATen graph with kernel
calls in place of the swapped groups; whatever no kernel replaced must cost no more than eager's own ops (issue #21:
Llama-3.2-1B decode on the H200 ran 8960 us optimized against eager's 4825). This times, side by side in one process
under torch.no_grad, with no swap at all:
- eager: the model's own forward;
- raw:   the exported graph as graph mode ran it before lean.py (lean_graph disabled);
- lean:  the graph as graph mode runs it now (optimizing/lean.py).
Each is called `--iters` times between two CUDA events, the three rotating within each of `--repeats` rounds; the
median round is reported, with the CUDA kernels one call launches (torch.profiler) and the ATen ops that do device
work (views and metadata asserts not counted). Outputs are compared with the eager one (max abs difference).

On a machine without a GPU no time is meaningful: the script runs the small variant on the CPU, counts the ATen ops
and compares the outputs, and writes "not meaningful on CPU" in place of times.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def _graph(model, inputs, lean: bool):
    import kerntailor.optimizing.graph as graph_mode
    from kerntailor.profiling import profile_model_traced

    traced = profile_model_traced(model, inputs, target="h200", top=1)
    keep = graph_mode.lean_graph
    graph_mode.lean_graph = keep if lean else (lambda gm, known: {})
    try:
        return graph_mode.GraphForward(model, traced.traced.program, (), inputs)
    finally:
        graph_mode.lean_graph = keep


def count_ops(fn, inputs) -> Counter:
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if not func.is_view and "assert" not in str(func) and func is not torch.ops.aten.lift_fresh.default:
                self.ops[str(func)] += 1
            return func(*args, **(kwargs or {}))

    with Count() as counted:
        fn(*inputs)
    return counted.ops


def count_kernels(fn, inputs) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def time_rounds(fns: dict, inputs, iters: int, repeats: int) -> dict:
    rounds = {k: [] for k in fns}
    names = list(fns)
    for r in range(repeats):
        for k in names[r % len(names):] + names[:r % len(names)]:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(iters):
                fns[k](*inputs)
            end.record()
            torch.cuda.synchronize()
            rounds[k].append(start.elapsed_time(end) * 1e3 / iters)
    return {k: {"median_us": statistics.median(v), "min_us": min(v), "max_us": max(v)} for k, v in rounds.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--variant", default=None, help="default on a GPU, small on the CPU")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    from kerntailor.problem import load_problem

    gpu = torch.cuda.is_available()
    device, variant = ("cuda" if gpu else "cpu"), args.variant or ("default" if gpu else "small")
    problem = load_problem(args.problem, dtype=args.dtype)
    torch.manual_seed(0)
    model = problem.make_model(variant, device=device).eval()
    inputs = problem.make_inputs(variant, device=device)
    fns = {"eager": model, "raw": _graph(model, inputs, lean=False), "lean": _graph(model, inputs, lean=True)}
    row = {"problem": args.problem, "dtype": args.dtype, "variant": variant, "device": device,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name() if gpu else None}
    with torch.no_grad():
        ref = model(*inputs)
        for k, fn in fns.items():
            out = fn(*inputs)
            ops = count_ops(fn, inputs)
            row[k] = {"max_abs_diff": float((out.float() - ref.float()).abs().max()), "aten_ops": sum(ops.values()),
                      "ops": dict(sorted(ops.items()))}
            if gpu:
                for _ in range(3):
                    fn(*inputs)
                row[k]["cuda_kernels"] = count_kernels(fn, inputs)
        if gpu:
            for k, t in time_rounds(fns, inputs, args.iters, args.repeats).items():
                row[k].update(t)
        else:
            row["note"] = "times not meaningful on CPU: op counts and outputs only"
    for k in fns:
        r = row[k]
        print(f"{k:6s} ops {r['aten_ops']:5d} kernels {r.get('cuda_kernels', '-')!s:>5} "
              f"median {r.get('median_us', float('nan')):9.1f} us  max|diff| {r['max_abs_diff']:.3g}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(row, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
