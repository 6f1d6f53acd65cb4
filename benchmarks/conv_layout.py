"""The library convolution's layout, side by side: a mixed module (cuDNN/MIOpen convolution + generated tail) with
its convolution called on NCHW tensors ("nchw"), and on channels-last ones with its output kept channels-last for
the tail ("channels_last": the tail reads NHWC / NDHWC by its physical strides and writes the module's NCHW output
itself, codegen/memory_format.py; the input is converted per call, the weight once; its pointwise tail walks 2-D
tiles, coalesced for the NHWC load and the NCHW store: the schedule's tile2d), the same with the pointwise tail
walking rows as before the tile ("channels_last_rows": tile2d off, its loads stepping by C between lanes; the
same source as "channels_last" where no pointwise tail reads the kept output), beside eager and torch.compile, at
the problem's own sizes, in one interleaved timing (measure/stopwatch.py).

    PYTHONPATH=src python3 benchmarks/conv_layout.py FILE.py [...] --out conv_layout.json [--dtype bf16]
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/conv_layout.py tests/data/mixed/conv_bias_relu.py \
        --out /tmp/c.json --smoke          # CPU: small variant, both modules against eager, no times

The tail kernels take their default schedules (not searched): only the convolution's layout differs between the
two modules. `output_kept` says per file whether every library convolution's output stayed channels-last (where a
reader cannot index it so, a GroupNorm's (N, G, C/G*H*W) view say, it is copied back to NCHW, as every
channels-last run before 2026-12-03 did: conv_layout_h200_fp32_2026-12-02.json). Each module's output is compared
with eager's (relative norm error, a sanity figure beside the times: the referee judges modules, this script does
not). Times are medians (us), labelled measured on the GPU.
"""

from __future__ import annotations

from pathlib import Path

from _common import load_candidate, rel_err, run_files

ROOT = Path(__file__).resolve().parents[1]


def modules(path: Path, dtype: str | None, arch: str):
    """(spec, {"output_kept": bool, "nchw": source, "channels_last": source}) or (spec, None) where no group is a
    library conv."""
    from dataclasses import replace

    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule, generate_module
    from kerntailor.codegen.memory_format import kept_layout
    from kerntailor.ir.nodes import Conv
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    spec = load_problem(path, dtype=dtype)
    _, gen = capture_generalized(spec)
    plan = plan_fusion(gen.graph, [f for f in FAMILIES if f != "conv"])   # the library's convolution (not conv.py's)
    convs = [g for g in plan.groups if g.family == "library" and isinstance(gen.graph.node(g.nodes[0]), Conv)]
    if not convs:
        return spec, None
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    out = {"output_kept": all(kept_layout(gen, gen.graph.node(g.nodes[0])) is not None for g in convs)}
    rows = {g.name: replace(base[g.name], tile2d=False) for g in plan.groups if g.family == "pointwise"}
    for label, flag, tails in (("nchw", False, {}), ("channels_last", True, {}), ("channels_last_rows", True, rows)):
        schedules = dict(base) | tails | {g.name: replace(base[g.name], channels_last=flag) for g in convs}
        out[label] = generate_module(spec, gen, plan, schedules, "h200" if arch == "sm_90" else "mi300x", arch).source
    if out["channels_last_rows"] == out["channels_last"]:
        del out["channels_last_rows"]   # no tail took the tile: nothing to compare
    return spec, out


def bench_file(path: Path, dtype: str | None, smoke: bool, workdir: Path) -> dict:
    import torch

    record = {"problem": path.stem, "path": str(path)}
    spec, sources = modules(path, dtype, "gfx942" if smoke or torch.version.hip else "sm_90")
    if sources is None:
        return record | {"skipped": "no library convolution in the plan"}
    record["output_kept"] = sources.pop("output_kept")
    device = "cpu" if smoke else "cuda"
    variant = spec.variants[-1].name if smoke else "default"   # the smallest declared (odd) on the CPU
    torch.manual_seed(0)
    inputs = spec.make_inputs(variant, device=device)
    model = spec.make_model(variant, device=device)
    with torch.no_grad():
        expected = model(*inputs)
    fns = {"eager": lambda xs: model(*xs)}
    for label, source in sources.items():
        file = workdir / f"{path.stem}_{label}.py"
        file.write_text(source)
        candidate = spec.cast_candidate(load_candidate(file, "conv").ModelNew(*spec.init_inputs(variant)).to(device))
        candidate.load_state_dict(model.state_dict())
        with torch.no_grad():
            record[f"rel_err_{label}"] = rel_err(candidate(*inputs), expected)
        fns[label] = (lambda m: lambda xs: m(*xs))(candidate)
    if smoke:
        return record
    compiled = torch.compile(model)
    fns["torch.compile"] = lambda xs: compiled(*xs)
    from kerntailor.measure.stopwatch import measure

    timings = measure(fns, [inputs], budget_s=2.0, max_runs=100)
    record["times_us"] = {n: t.median_s * 1e6 for n, t in timings.items()}
    record["quartiles_us"] = {n: [t.q1_s * 1e6, t.q3_s * 1e6] for n, t in timings.items()}
    t = record["times_us"]
    record["channels_last_over_nchw"] = t["nchw"] / t["channels_last"]
    if "channels_last_rows" in t:
        record["tile2d_over_rows"] = t["channels_last_rows"] / t["channels_last"]
    record["best_vs_compile"] = t["torch.compile"] / min(t["nchw"], t["channels_last"])
    return record


def main(argv: list[str] | None = None) -> int:
    return run_files("conv_layout.py", __doc__, bench_file, argv)


if __name__ == "__main__":
    raise SystemExit(main())
