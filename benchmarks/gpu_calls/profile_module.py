"""Where a module's time goes on the GPU: wall time per forward (CUDA events) against the sum of its kernels' device
time (torch.profiler), launches per forward, the top kernels, and the module replayed as a CUDA graph (which takes
the host's launch cost away). For an emitted module beside the problem's own eager model: a generated module slower
than eager is either slow kernels (kernel sum near the wall time) or the host launching them (wall time far above the
kernel sum, the graph replay near the sum).

    PYTHONPATH=src python3 benchmarks/gpu_calls/profile_module.py PROBLEM.py MODULE.py [MODULE.py ...] --out OUT.json

Each MODULE.py defines ModelNew (kernel.py, generated.py); built as KernelBench does, ModelNew(*get_init_inputs()),
with the reference's state_dict. GPU only; measured numbers, labelled with the GPU's name in OUT.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: host_overhead.py


def _time_wall(fn, inputs, iters: int) -> float:
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn(*inputs)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / iters


def _profile(fn, inputs, iters: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn(*inputs)
        torch.cuda.synchronize()
    kernels: Counter = Counter()
    counts: Counter = Counter()
    for e in prof.events():
        if e.device_type.name == "CUDA":
            kernels[e.name] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            counts[e.name] += 1
    total = sum(kernels.values()) / iters
    return {"kernel_us_per_forward": round(total, 1), "launches_per_forward": sum(counts.values()) / iters,
            "top": [{"kernel": k[:120], "us_per_forward": round(v / iters, 1), "calls": counts[k] // iters}
                    for k, v in kernels.most_common(12)]}


def main(argv: list[str] | None = None) -> int:
    import torch

    from host_overhead import graph_us
    from kerntailor.problem import load_problem
    from kerntailor.verify.candidate import load_candidate
    from kerntailor.verify.draws import draw_inputs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args(argv)
    device = torch.device("cuda")
    problem = load_problem(args.problem)
    ref = problem.make_model("default", device, 0)
    inputs = draw_inputs(problem, "default", "normal", 1, device)
    rows = []
    models = [("eager", ref)]
    for path in args.modules:
        try:
            new = load_candidate(path).ModelNew(*problem.init_inputs("default")).to(device)
            new.load_state_dict(ref.state_dict())
            models.append((path, new))
        except Exception as e:  # noqa: BLE001 - a module that does not build: said in the row
            rows.append({"module": path, "error": f"{type(e).__name__}: {str(e)[:200]}"})
    for name, model in models:
        model.train(ref.training)
        with torch.no_grad():
            for _ in range(3):
                model(*inputs)
            row = {"module": name, "wall_us": round(_time_wall(model, inputs, args.iters), 1)}
            row.update(_profile(model, inputs, 5))
            replay = graph_us(model, inputs, args.iters)   # host_overhead.py's capture and replay
            row["graph_replay_us"] = round(replay, 1) if isinstance(replay, float) else replay
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "top"}), flush=True)
    out = {"command": " ".join(sys.argv), "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "label": "measured", "problem": args.problem, "rows": rows}
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
