"""Pools whose windows overlap along the last axis (issue #18 item 4): the window of masked loads (SPAN=0, the
default before 2026-12-03) against the span schedule (SPAN=1, codegen/pool.py: aligned 16-byte chunks of the input,
one vector load each, shared by a lane group's outputs), beside eager and torch.compile, at KernelBench's sizes.

Problems: KernelBench level 1 41_Max_Pooling_1D (MaxPool1d 8, stride 1, padding 4, dilation 3 on 64 x 192 x 65536)
and 44_Average_Pooling_1D (AvgPool1d 8, stride 1, padding 4 on 64 x 128 x 65536), written out here (the same
Model, sizes and arguments as the KernelBench files) so the script needs no copy of KernelBench; FILE arguments time
other problems the same way (their pool groups get the variants, other groups their defaults). Each in fp32 and
bf16 (--dtypes). Our variants (default schedules, not searched; only the pool knobs below differ):

- window:   SPAN=0, num_warps=4 (the previous default's schedule; on NVIDIA its max now combines by one
            max.NaN where the previous kernel compared and selected: 3101 us (41) and 1873 us (44) fp32 measured
            with that one on the H200)
- span:     SPAN=1 with the new default's num_warps (4 for fp32, 2 for bf16: 64 lane groups per warp)
- span_w4:  SPAN=1, num_warps=4 (where the default is not 4)
- span_512: SPAN=1, XBLOCK=512 (fewer outputs per lane)

Floor: (input + output bytes) / the H200's measured copy bandwidth (4.27 TB/s, targets/roofline.py's
H200_MEASURED), and x_floor = time / floor. Times: medians in us over interleaved runs with the L2 flushed before
each (measure/stopwatch.py), labelled measured. Each of ours is checked against eager (relative norm error).
The JSON (--out) is rewritten after each problem; problems not started within --deadline-s are skipped (about
15-20 s each on an H200, most of it torch.compile: the default run stays under 90 s).

    PYTHONPATH=src python3 benchmarks/pool_probe.py --out $OUT/pool.json
    PYTHONPATH=src python3 benchmarks/pool_probe.py --out $OUT/pool.json --dtypes bf16 FILE.py ...
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/pool_probe.py --out /tmp/p.json --smoke   # CPU, no times
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import load_candidate, rel_err

_PROBLEMS = {
    # name: (module, its arguments, input shape): KernelBench level 1's files
    "41_Max_Pooling_1D": ("MaxPool1d", "kernel_size=8, stride=1, padding=4, dilation=3", (64, 192, 65536)),
    "44_Average_Pooling_1D": ("AvgPool1d", "kernel_size=8, stride=1, padding=4", (64, 128, 65536)),
}
_SMOKE_SHAPE = (2, 3, 304)   # rows of whole 16-byte chunks, as at KernelBench's sizes

_TEMPLATE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.{module}({args})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.rand({shape})]


def get_init_inputs():
    return []
'''

def variants(dtype: str) -> dict[str, dict]:
    """The pool knobs of each variant (module docstring); span's num_warps: the default's rule (SPAN_LANES lane
    groups of 16 bytes per warp at XBLOCK 1024)."""
    warps = 4 if dtype == "fp32" else 2
    return {"window": {"SPAN": 0, "num_warps": 4}, "span": {"SPAN": 1, "num_warps": warps},
            "span_w4": {"SPAN": 1, "num_warps": 4}, "span_512": {"SPAN": 1, "XBLOCK": 512, "num_warps": warps}}


def sources(path: Path, dtype: str | None, arch: str) -> tuple[object, dict[str, str], dict[str, dict]]:
    """(spec, {variant: module source}, {variant: the pool groups' knobs, and "default": the default schedule's});
    variants whose knobs equal an earlier one's (span_w4 in fp32) or that codegen refuses are left out."""
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, CodegenUnsupported, default_schedule, generate_module
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    spec = load_problem(path, dtype=dtype)
    _, gen = capture_generalized(spec)
    plan = plan_fusion(gen.graph, FAMILIES)
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    pools = [g for g in plan.groups if g.family == "pool"]
    if not pools:
        raise ValueError(f"{path.name}: no pool group in the plan")
    out, knobs = {}, {"default": {g.name: base[g.name].knob_values() for g in pools}}
    for label, overrides in variants(dtype or "fp32").items():
        chosen = dict(base) | {g.name: base[g.name].retune(overrides) for g in pools}
        values = {g.name: chosen[g.name].knob_values() for g in pools}
        if any(values == v for k, v in knobs.items() if k != "default"):
            continue
        try:
            out[label] = generate_module(spec, gen, plan, chosen, "h200" if arch == "sm_90" else "mi300x", arch).source
        except CodegenUnsupported as e:
            print(f"{path.stem} {label}: {e}", flush=True)
            continue
        knobs[label] = values
    return spec, out, knobs


def bench(path: Path, dtype: str, smoke: bool, workdir: Path) -> dict:
    import torch

    from kerntailor.targets.roofline import H200_MEASURED

    record = {"problem": path.stem, "dtype": dtype}
    spec, srcs, knobs = sources(path, None if dtype == "fp32" else dtype, "gfx942" if smoke or torch.version.hip
                                else "sm_90")
    record["knobs"] = knobs
    device = "cpu" if smoke else "cuda"
    torch.manual_seed(0)
    inputs = spec.make_inputs("default", device=device)
    model = spec.make_model("default", device=device)
    with torch.no_grad():
        expected = model(*inputs)
    moved = sum(t.numel() * t.element_size() for t in [*inputs, expected])
    record["bytes"] = moved
    record["floor_us"] = moved / H200_MEASURED.copy_bandwidth * 1e6
    fns = {"eager": lambda xs: model(*xs)}
    for label, source in srcs.items():
        file = workdir / f"{path.stem}_{dtype}_{label}.py"
        file.write_text(source)
        candidate = spec.cast_candidate(load_candidate(file, "pool").ModelNew(*spec.init_inputs("default")).to(device))
        with torch.no_grad():
            record[f"rel_err_{label}"] = rel_err(candidate(*inputs), expected)
        fns[label] = (lambda m: lambda xs: m(*xs))(candidate)
    if smoke:
        return record
    compiled = torch.compile(model)
    fns["torch.compile"] = lambda xs: compiled(*xs)
    from kerntailor.measure.stopwatch import measure

    timings = measure(fns, [inputs], budget_s=2.0, max_runs=60)
    t = {n: x.median_s * 1e6 for n, x in timings.items()}
    record["times_us"] = t
    record["quartiles_us"] = {n: [x.q1_s * 1e6, x.q3_s * 1e6] for n, x in timings.items()}
    record["x_floor"] = {n: v / record["floor_us"] for n, v in t.items()}
    ours = [n for n in srcs if n != "window"]
    if ours and "window" in t:
        best = min(ours, key=t.get)
        record["best_span"] = best
        record["window_over_best_span"] = t["window"] / t[best]
        record["compile_over_best_span"] = t["torch.compile"] / t[best]
    return record


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="other problems (default: KernelBench 41 and 44)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--smoke", action="store_true", help="CPU: a small shape under TRITON_INTERPRET, no times")
    parser.add_argument("--deadline-s", type=float, default=80.0, help="start no problem after this")
    args = parser.parse_args(argv)
    start = time.monotonic()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="pool_probe_"))
    files = list(args.files)
    if not files:
        for name, (module, pool_args, shape) in _PROBLEMS.items():
            files.append(workdir / f"{name}.py")
            files[-1].write_text(_TEMPLATE.format(module=module, args=pool_args,
                                                  shape=", ".join(map(str, _SMOKE_SHAPE if args.smoke else shape))))
    result = {"command": "benchmarks/pool_probe.py " + " ".join(str(f) for f in args.files),
              "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
              "device": "cpu (interpreter, no times)" if args.smoke else torch.cuda.get_device_name(),
              "label": "smoke (CPU)" if args.smoke else "measured", "floor": "bytes / 4.27 TB/s (H200 copy)",
              "rows": []}
    for path in files:
        for dtype in args.dtypes.split(","):
            if time.monotonic() - start > args.deadline_s:
                result["rows"].append({"problem": path.stem, "dtype": dtype, "skipped": "deadline"})
                continue
            try:
                row = bench(path, dtype, args.smoke, workdir)
            except Exception as e:   # one problem's failure is a row, not the end of the run
                row = {"problem": path.stem, "dtype": dtype, "error": f"{type(e).__name__}: {e}"[:400]}
            result["rows"].append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps(result, indent=1))
            if not args.smoke:
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
