"""Probe: how much of a small kernel's time is the host's (Python, dispatch, launches) and how much the GPU's.

The decode step at batch 1 (benchmarks/data/attn_probe/sdpa_gqa_decode_b1.py: 16.8 MB, a floor of ~5 us on the
H100) ran 141-216 us per call under the stopwatch on 2026-12-05 whatever its split, eager's cuDNN SDPA 101 us: a
fixed cost far above the bytes. This script splits one call of each given kernel.py (and of eager) into

- host_us: the host's time per call, N calls enqueued back to back between two synchronizations (when the GPU
  keeps up, this is the Python and launch cost alone);
- graph_us: the GPU's time per call, the same call captured in a CUDA graph and replayed N times between CUDA
  events (no host work at all);
- op_us / launch_us: host time per call of the module's custom op (torch.ops.kerntailor.*) and of its
  _launch_kernels function called directly (forward()'s checks and the op's dispatch left out);
- stopwatch_us: measure/stopwatch.py's median (what generate reports: L2 flushed before each run);
- profile: cProfile's top functions by own time over N calls of forward().

    PYTHONPATH=src python3 benchmarks/host_overhead.py PROBLEM.py --dtype bf16 K1.py [K2.py ...] --out x.json
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def host_us(fn, inputs, n: int) -> float:
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*inputs)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def graph_us(fn, inputs, n: int) -> float | str:
    import torch

    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn(*inputs)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn(*inputs)
        graph.replay()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / n * 1e3
    except Exception as e:   # noqa: BLE001 - a call that does not capture is a row saying so
        return f"{type(e).__name__}: {str(e)[:200]}"


def profile_lines(fn, inputs, n: int, top: int = 14) -> list[str]:
    import torch

    prof = cProfile.Profile()
    torch.cuda.synchronize()
    prof.enable()
    for _ in range(n):
        fn(*inputs)
    prof.disable()
    torch.cuda.synchronize()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return [line for line in out.getvalue().splitlines() if line.strip()][-top - 1:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--out", required=True)
    args = ap.parse_intermixed_args(argv)
    import torch

    from _common import load_candidate
    from kerntailor.measure.stopwatch import measure
    from kerntailor.problem import load_problem

    spec = load_problem(args.problem, dtype=args.dtype)
    torch.manual_seed(0)
    inputs = spec.make_inputs("default", device="cuda")
    model = spec.make_model("default", device="cuda")
    calls = {"eager": model}
    extra = {}
    for k, path in enumerate(args.kernels):
        module = load_candidate(Path(path), f"host{k}")
        cand = spec.cast_candidate(module.ModelNew(*spec.init_inputs("default")).to("cuda"))
        cand.load_state_dict(model.state_dict())
        name = Path(path).stem
        calls[name] = cand
        found = re.search(r"torch\.ops\.kerntailor\.(\w+)", Path(path).read_text())
        extra[name] = {"launch": getattr(module, "_launch_kernels", None),
                       "op": getattr(torch.ops.kerntailor, found.group(1)) if found else None}
    rows = []
    with torch.no_grad():
        for name, fn in calls.items():
            row = {"name": name, "host_us": round(host_us(fn, inputs, args.n), 1)}
            for key in ("op", "launch"):
                f = extra.get(name, {}).get(key)
                if f is not None:
                    row[f"{key}_us"] = round(host_us(f, inputs, args.n), 1)
            g = graph_us(fn, inputs, args.n)
            row["graph_us"] = round(g, 2) if isinstance(g, float) else g
            row["profile"] = profile_lines(fn, inputs, args.n)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "profile"}), flush=True)
        times = measure({n: (lambda g: lambda xs: g(*xs))(f) for n, f in calls.items()}, [inputs], budget_s=1.0,
                        max_runs=60)
    for row in rows:
        row["stopwatch_us"] = round(times[row["name"]].median_s * 1e6, 1)
        print(row["name"], "stopwatch", row["stopwatch_us"], flush=True)
    meta = {"command": " ".join(sys.argv), "device": torch.cuda.get_device_name(),
            "torch": torch.__version__, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "n": args.n}
    Path(args.out).write_text(json.dumps({**meta, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
