"""The generated convolution (codegen/conv.py: implicit GEMM + fused epilogue) against the library's, side by side:
for each problem file, in one interleaved timing (measure/stopwatch.py) at the problem's own sizes,

- "library": the mixed module as before the conv family: cuDNN / MIOpen's convolution (aten.convolution, NCHW) and
  the generated tail after it (the plan without the conv family, default schedules);
- "library_cl": the same with the convolution on channels-last tensors and its output kept so for the tail, where
  it can be (codegen/memory_format.py; absent where it cannot);
- "gen_<BMxBNxBK_w_s>": the generated convolution with its tail as its epilogue, one module per schedule: the
  default schedule and conv_seeds' for the target (search/families.py), plus EXTRA_TILES;
- "eager" and "torch.compile" (its default mode).

Each module's output is compared with eager's (relative norm error, a sanity figure beside the times: the referee
judges modules, this script does not). Times are medians (us), labelled measured on the GPU. A file whose convolution
the writer refuses (transposed, depthwise) has no generated rows, only the reason.

    PYTHONPATH=src python3 benchmarks/conv_gen_probe.py FILE.py [...] --out conv_gen.json [--dtype bf16]
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/conv_gen_probe.py tests/data/conv/conv2d_groups_bias_relu.py \
        --out /tmp/c.json --smoke        # CPU: smallest variant, every module against eager, no times
"""

from __future__ import annotations

from pathlib import Path

from _common import load_candidate, rel_err, run_files

ROOT = Path(__file__).resolve().parents[1]
# beyond the default and the seeds: a small tile (many programs for small layers) and a wide-K one
EXTRA_TILES = ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
               {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3})


def _label(schedule) -> str:
    s = schedule
    return f"gen_{s.BLOCK_M}x{s.BLOCK_N}x{s.BLOCK_K}_w{s.num_warps}_s{s.num_stages}"


def modules(path: Path, dtype: str | None, arch: str, smoke: bool) -> tuple[object, dict, dict]:
    """(spec, {label: source}, notes): the library modules and one generated module per schedule."""
    from dataclasses import replace

    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, default_schedule, generate_module, plan_of, refused_anchors
    from kerntailor.codegen.memory_format import kept_layout
    from kerntailor.errors import KerntailorError
    from kerntailor.generate.kernels import group_work
    from kerntailor.ir.nodes import Conv
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem
    from kerntailor.search.families import make_space, seed_knobs
    from kerntailor.targets import get_target

    target_name = "h200" if arch == "sm_90" else "mi300x"
    spec = load_problem(path, dtype=dtype)
    cap, gen = capture_generalized(spec)
    work_dtype = cap.cost.dtype
    sources, notes = {}, {}
    lib_plan = plan_fusion(gen.graph, [f for f in FAMILIES if f != "conv"])
    base = {g.name: default_schedule(gen, g) for g in lib_plan.groups}
    sources["library"] = generate_module(spec, gen, lib_plan, base, target_name, arch).source
    convs = [g for g in lib_plan.groups if g.family == "library" and isinstance(gen.graph.node(g.nodes[0]), Conv)]
    if convs and all(kept_layout(gen, gen.graph.node(g.nodes[0])) is not None for g in convs):
        kept = dict(base) | {g.name: replace(base[g.name], channels_last=True) for g in convs}
        sources["library_cl"] = generate_module(spec, gen, lib_plan, kept, target_name, arch).source
    refused = refused_anchors(gen.graph)
    if refused:
        notes["refused"] = refused
    plan = plan_of(gen.graph)
    conv_groups = [g for g in plan.groups if g.family == "conv"]
    if not conv_groups:
        return spec, sources, notes
    defaults = {g.name: default_schedule(gen, g) for g in plan.groups}
    target = get_target(target_name)
    tried = []
    for g in conv_groups:
        _, sizes = group_work(gen, g, work_dtype)
        space = make_space("conv", target, dtype=work_dtype, **sizes)
        notes.setdefault("sizes", {})[g.name] = sizes
        knobs = [{}] + ([] if smoke else seed_knobs("conv", target, dtype=work_dtype, **sizes) + list(EXTRA_TILES))
        for k in knobs:
            schedule = defaults[g.name].retune(k)
            if space.violations(space.config_of(schedule)) or schedule in tried:
                continue
            tried.append(schedule)
    for schedule in tried:   # every conv group of the file under the same schedule (these files have one)
        schedules = dict(defaults) | {g.name: schedule for g in conv_groups}
        try:
            sources[_label(schedule)] = generate_module(spec, gen, plan, schedules, target_name, arch).source
        except KerntailorError as e:
            notes.setdefault("codegen_refused", {})[_label(schedule)] = str(e)[:200]
    return spec, sources, notes


def bench_file(path: Path, dtype: str | None, smoke: bool, workdir: Path) -> dict:
    import torch

    record = {"problem": path.stem, "path": str(path), "dtype": dtype or "as written"}
    spec, sources, notes = modules(path, dtype, "gfx942" if smoke or torch.version.hip else "sm_90", smoke)
    record |= notes
    device = "cpu" if smoke else "cuda"
    variant = spec.variants[-1].name if smoke else "default"   # the smallest declared (odd) on the CPU
    torch.manual_seed(0)
    inputs = spec.make_inputs(variant, device=device)
    model = spec.make_model(variant, device=device)
    with torch.no_grad():
        expected = model(*inputs)
    fns = {"eager": lambda xs: model(*xs)}
    for label, source in sources.items():
        file = workdir / f"{path.stem}_{dtype or 'asis'}_{label}.py"
        file.write_text(source)
        try:
            candidate = spec.cast_candidate(load_candidate(file, "convgen").ModelNew(*spec.init_inputs(variant))
                                            .to(device))
            candidate.load_state_dict(model.state_dict())
            with torch.no_grad():
                record[f"rel_err_{label}"] = rel_err(candidate(*inputs), expected)
        except Exception as e:   # a module that fails to run is a note, not the end of the file
            record.setdefault("run_errors", {})[label] = f"{type(e).__name__}: {e}"[:300]
            continue
        fns[label] = (lambda m: lambda xs: m(*xs))(candidate)
    if smoke:
        return record
    compiled = torch.compile(model)
    fns["torch.compile"] = lambda xs: compiled(*xs)
    from kerntailor.measure.stopwatch import measure

    timings = measure(fns, [inputs], budget_s=2.0, max_runs=100)
    t = record["times_us"] = {n: tm.median_s * 1e6 for n, tm in timings.items()}
    record["quartiles_us"] = {n: [tm.q1_s * 1e6, tm.q3_s * 1e6] for n, tm in timings.items()}
    gen = {k: v for k, v in t.items() if k.startswith("gen_")}
    lib = {k: v for k, v in t.items() if k.startswith("library")}
    if gen:
        best = min(gen, key=gen.get)
        record["best_generated"] = best
        if lib:
            record["library_over_generated"] = min(lib.values()) / gen[best]   # > 1: the generated one is faster
        record["compile_over_generated"] = t["torch.compile"] / gen[best]
    return record


def main(argv: list[str] | None = None) -> int:
    return run_files("conv_gen_probe.py", __doc__, bench_file, argv, free_between=True)


if __name__ == "__main__":
    raise SystemExit(main())
