"""Where a library convolution + generated tail loses its time: per-kernel device times of eager, torch.compile and
an emitted module, side by side in one process (issue #19).

    PYTHONPATH=src python3 benchmarks/libtail_profile.py PROBLEM.py MODULE.py [MODULE2.py ...] --dtype bf16 \\
        --out $OUT/libtail_profile.json

On the H200 (2026-12-04b calls 1-2), four level-2 files that convolve 64 -> 128 channels 3x3 over 128^2-256^2 images
and then run a short tail took the library path: the emitted module with the library's convolution and a generated
tail (1329 us on 31_Conv2d_Min_Add_Multiply) lost to torch.compile (882 us), which also runs cuDNN and then one
Triton kernel. This says where the difference goes: each variant is run under torch.profiler (CUDA activity) for
`--iters` calls after warm-up, and the kernels are listed by total device time per call, with the variant's
median wall time per call (graph_lean.time_rounds, interleaved rounds). MODULE is a `ModelNew` file as `generate`
writes it (generated.py / kernel.py); it takes the reference's state_dict. GPU only.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_lean import time_rounds  # noqa: E402


def _load_module_new(path: str, init_inputs: list, state_dict: dict, dtype) -> torch.nn.Module:
    spec = importlib.util.spec_from_file_location(f"libtail_{Path(path).stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.ModelNew(*init_inputs).to(device="cuda", dtype=dtype).eval()
    model.load_state_dict(state_dict)
    return model


def kernel_table(fn, inputs, iters: int) -> list[dict]:
    """Device kernels of `iters` calls to `fn`, by name: time per call (us) and launches per call."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn(*inputs)
        torch.cuda.synchronize()
    total, count = collections.Counter(), collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total[e.name] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            count[e.name] += 1
    return [{"kernel": k[:160], "us_per_call": round(t / iters, 1), "launches_per_call": count[k] / iters}
            for k, t in total.most_common(12)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("modules", nargs="*")
    parser.add_argument("--dtype", default="bf16")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("libtail_profile.py: no GPU: nothing to time", file=sys.stderr)
        return 1
    from kerntailor.problem import load_problem
    from kerntailor.problem.spec import DTYPES

    problem = load_problem(args.problem, dtype=args.dtype)
    model = problem.make_model("default", device="cuda").eval()
    inputs = problem.make_inputs("default", device="cuda")
    fns = {"eager": model, "compile": torch.compile(model)}
    for path in args.modules:
        fns[Path(path).parent.name + "/" + Path(path).name] = _load_module_new(
            path, problem.init_inputs("default"), model.state_dict(), DTYPES[args.dtype])
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    row = {"problem": args.problem, "dtype": args.dtype, "gpu": torch.cuda.get_device_name(),
           "torch": torch.__version__, "date": now, "variants": {}}
    with torch.no_grad():
        ref = model(*inputs)
        for name, fn in list(fns.items()):
            try:   # a module that does not build or run here (shared memory, registers) is a row with its error
                for _ in range(3):
                    out = fn(*inputs)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - any failure of one variant is data, the others still run
                row["variants"][name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
                del fns[name]
                continue
            row["variants"][name] = {"max_abs_diff": float((out.float() - ref.float()).abs().max()),
                                     "kernels": kernel_table(fn, inputs, args.iters)}
        for name, stats in time_rounds(fns, inputs, args.iters, 5).items():
            row["variants"][name].update(stats)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(row, indent=1))
    for name, v in row["variants"].items():
        if "error" in v:
            print(f"== {name}: {v['error']}")
            continue
        print(f"== {name}: {v['median_us']:.1f} us per call, max|diff| {v['max_abs_diff']:.3g}")
        for k in v["kernels"]:
            print(f"   {k['us_per_call']:9.1f} us x{k['launches_per_call']:.0f}  {k['kernel']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
