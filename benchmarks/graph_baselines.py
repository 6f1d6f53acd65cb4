"""The baselines a CUDA graph deserves: a model's eager forward and torch.compile, each also run without launch
costs (issue #21).

    PYTHONPATH=src python3 benchmarks/graph_baselines.py problems/models/llama3_2_1b_decode.py --dtype bf16 \\
        --out benchmarks/data/<dir>/graph_baselines_decode.json

`kerntailor optimize` times the optimized model in a CUDA graph (optimizing/check.py's `cuda_graphed`): on
Llama-3.2-1B decode (H200, 2026-12-04 call 2) 1463 us against eager's 5048 and torch.compile's 3358. Both of those
pay the host's launches on every call; a user who captures eager in a CUDA graph, or runs torch.compile's
"reduce-overhead" mode (CUDA graphs through cudagraph trees), does not. This times, side by side in one process
under torch.no_grad (graph_lean.py's rotating rounds: the median per forward of `--repeats` rounds of `--iters`
calls between CUDA events):
- eager, eager_cuda_graph (the model captured with `cuda_graphed`, as optimize captures the optimized one);
- compile (default mode, as optimize's end-to-end timing), compile_reduce_overhead (mode="reduce-overhead").
Every variant's output is compared with eager's. GPU only: without one it says so and exits 1.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_lean import time_rounds  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("graph_baselines.py: no GPU: nothing to time", file=sys.stderr)
        return 1
    from kerntailor.optimizing.check import cuda_graphed
    from kerntailor.problem import load_problem

    problem = load_problem(args.problem, dtype=args.dtype)
    torch.manual_seed(0)
    model = problem.make_model("default", device="cuda").eval()
    inputs = problem.make_inputs("default", device="cuda")
    start = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    row = {"problem": args.problem, "dtype": args.dtype, "gpu": torch.cuda.get_device_name(),
           "torch": torch.__version__, "date": now,
           "iters": args.iters, "repeats": args.repeats, "variants": {}}
    with torch.no_grad():
        ref = model(*inputs)
        graphed = cuda_graphed(model, inputs)
        fns = {"eager": model, "eager_cuda_graph": lambda *xs: graphed(list(xs)),
               "compile": torch.compile(model), "compile_reduce_overhead": torch.compile(model, mode="reduce-overhead")}
        for name, fn in fns.items():
            t0 = time.monotonic()
            for _ in range(3):   # compiles, warms up, records the cudagraph trees
                out = fn(*inputs)
            torch.cuda.synchronize()
            out = out[0] if isinstance(out, (tuple, list)) else out
            r = ref[0] if isinstance(ref, (tuple, list)) else ref
            row["variants"][name] = {"first_calls_s": round(time.monotonic() - t0, 2),
                                     "max_abs_diff": float((out.float() - r.float()).abs().max())}
        times = time_rounds(fns, inputs, args.iters, args.repeats)
    for name, stats in times.items():
        row["variants"][name].update(stats)
    row["wall_s"] = round(time.monotonic() - start, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(row, indent=1))
    for name, v in row["variants"].items():
        print(f"{name:26} {v.get('median_us', float('nan')):9.1f} us  max|diff| {v['max_abs_diff']:.3g}  "
              f"first calls {v['first_calls_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
