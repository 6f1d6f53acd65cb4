"""The generated convolution (codegen/conv.py: implicit GEMM, or the pointwise form for 1x1, + fused epilogue) against
the library's, side by side: for each problem file, in one interleaved timing (measure/stopwatch.py) at the problem's
own sizes,

- "library": the mixed module as before the conv family: cuDNN / MIOpen's convolution (aten.convolution, NCHW) and
  the generated tail after it (the plan without the conv family, default schedules);
- "library_cl": the same with the convolution on channels-last tensors and its output kept so for the tail, where
  it can be (codegen/memory_format.py; absent where it cannot; not with --quick);
- "gen_<form>_<BMxBNxBK_w_s>[_<precision>][@<group>]": the generated convolution with its tail as its epilogue, one
  module per schedule of one conv group (the others at their defaults; @group named where a file has several):
  form "pw" the pointwise form (1x1, stride 1, no padding, one group), "ig" the implicit GEMM (a transposed
  convolution's gather form), "tp" the implicit GEMM in the tap order (K as kernel position, input channel), "tc"
  the tap order over channels-last copies of the input and weight (the three timed at the default's tiles where a
  kernel has several positions), "ph" a transposed convolution split by output phase (both forms timed), and with
  --unpacked a transposed convolution's default schedule and (fp32) its tf32 seed again with the weight read
  through its own view (packed_weight False: the form before the host-packed weight), labelled "_uw"; with
  --taps-outer a transposed convolution at stride 1 (phases 1) also in the gather form with its taps outer
  (taps_outer: codegen/conv.py's _taps_outer_step) under the default schedule and the second seed (fp32: the tf32
  seed only), labelled "_to"; the default schedule, the implicit GEMM's default on a convolution the pointwise form
  takes (the old path), conv_seeds' for the target (search/families.py: both forms; the first two with --quick,
  three where the K orders are: one each), EXTRA_TILES (not with --quick), and for
  fp32 operands the first seed in tf32 (cuDNN's convolutions run tf32 under PyTorch's default
  torch.backends.cudnn.allow_tf32);
- "eager" and "torch.compile" (its default mode; not with --quick unless --with-compile).

Each module's output is compared with eager's (relative norm error, a sanity figure beside the times: the referee
judges modules, this script does not). Times are medians (us), labelled measured on the GPU; each row ends with
"eager_over_<best gen_pw / gen_ig / generated>" (> 1: the generated one is faster than eager's cuDNN). A file whose
convolution the writer refuses (fp64) has no generated rows, only the reason.

    PYTHONPATH=src python3 benchmarks/conv_gen_probe.py FILE.py [...] --out conv_gen.json [--dtype bf16,fp32] [--quick]
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/conv_gen_probe.py tests/data/conv/conv2d_groups_bias_relu.py \
        --out /tmp/c.json --smoke        # CPU: smallest variant, every module against eager, no times

On the H200, KernelBench level 1's 1x1 convolutions (87, and 86's second), 3x3 (63), 1-d (67) and depthwise (82) in
bf16 and fp32, old form beside new and cuDNN, about 120 s: benchmarks/gpu_calls/conv_pointwise_probe.sh; four
transposed convolutions (73, 75, 57) against cuDNN and torch.compile: benchmarks/gpu_calls/conv_transposed_probe.sh;
the tap order against the weight's on 80 (dilated, padded 5 x 9) and 55 (3 x 3, no padding), bf16, one line per
variant: benchmarks/gpu_calls/conv_taps_probe.sh.
"""

from __future__ import annotations

from pathlib import Path

from _common import load_candidate, rel_err, run_files

ROOT = Path(__file__).resolve().parents[1]
# beyond the default and the seeds: a small tile (many programs for small layers) and a wide-K one
EXTRA_TILES = ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
               {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3})


def _probe_tiles() -> list[dict]:
    """More schedules to time beside EXTRA_TILES (not with --quick's cut), from the environment: CONV_PROBE_TILES, a
    JSON list of knob dicts (e.g. '[{"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8}]'); each is laid
    over the default schedule, and one the space forbids is skipped as the others are."""
    import json
    import os

    text = os.environ.get("CONV_PROBE_TILES", "").strip()
    tiles = json.loads(text) if text else []
    if not isinstance(tiles, list) or not all(isinstance(t, dict) for t in tiles):
        raise SystemExit("conv_gen_probe.py: CONV_PROBE_TILES must be a JSON list of objects")
    return tiles


def _label(schedule, dtype: str) -> str:
    s = schedule
    precision = f"_{s.precision}" if dtype == "fp32" and s.precision != "ieee" else ""
    form = "pw" if s.pointwise else "ph" if s.phases else "tc" if s.stage else "tp" if s.taps else "ig"
    variant = "_to" if s.taps_outer else "" if s.packed_weight else "_uw"
    return f"gen_{form}_{s.BLOCK_M}x{s.BLOCK_N}x{s.BLOCK_K}_w{s.num_warps}_s{s.num_stages}{precision}{variant}"


def modules(path: Path, dtype: str | None, arch: str, smoke: bool, quick: bool = False,
            unpacked: bool = False, taps_outer: bool = False) -> tuple[object, dict, dict]:
    """(spec, {label: source}, notes): the library modules and one generated module per schedule of a conv group."""
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
    if not quick and convs and all(kept_layout(gen, gen.graph.node(g.nodes[0])) is not None for g in convs):
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
    variants = {}   # label -> the plan's schedules
    for g in conv_groups:
        _, sizes = group_work(gen, g, work_dtype)
        space = make_space("conv", target, dtype=work_dtype, **sizes)
        notes.setdefault("sizes", {})[g.name] = sizes
        seeds = seed_knobs("conv", target, dtype=work_dtype, **sizes)
        knobs = [{}] + ([{"pointwise": False}] if sizes.get("pointwise") else [])
        knobs += [{"phases": not defaults[g.name].phases}] if sizes.get("phases") else []   # transposed: both forms
        if sizes.get("taps"):   # each K order at the default's tiles: taps over channels-last copies, taps, weight's
            knobs += [{"taps": t, "stage": st} for t, st in ((True, True), (True, False), (False, False))]
        if not smoke:
            knobs += seeds[:3] if quick and sizes.get("taps") else seeds[:2] if quick else seeds + list(EXTRA_TILES)
            knobs += _probe_tiles()
            if work_dtype == "fp32":
                knobs.append((seeds[0] if seeds else {}) | {"precision": "tf32"})
        if unpacked and sizes.get("phases"):   # the transposed forms again, the weight read through its view
            old = [{}] + [k for k in knobs if k.get("precision") == "tf32"]
            knobs += [k | {"packed_weight": False} for k in old]
        if sizes.get("outer"):   # taps outer: over the channels-last copy of x and over NCHW's x
            knobs += [{"taps_outer": True, "stage": st} for st in (True, False)]
        if taps_outer and sizes.get("phases") == 1:   # stride 1: the gather form with its taps outer
            tf32 = [k for k in knobs if k.get("precision") == "tf32"]
            tried = tf32 if work_dtype == "fp32" else [{}] + seeds[1:2]
            knobs += [k | {"phases": False, "taps_outer": True} for k in tried]
        for k in knobs:
            schedule = defaults[g.name].retune(k)
            if space.violations(space.config_of(schedule)):
                continue
            label = _label(schedule, work_dtype) + (f"@{g.name}" if len(conv_groups) > 1 else "")
            variants.setdefault(label, dict(defaults) | {g.name: schedule})
    for label, schedules in variants.items():
        try:
            sources[label] = generate_module(spec, gen, plan, schedules, target_name, arch).source
        except KerntailorError as e:
            notes.setdefault("codegen_refused", {})[label] = str(e)[:200]
    return spec, sources, notes


def bench_file(path: Path, dtype: str | None, smoke: bool, workdir: Path, quick: bool = False,
               with_compile: bool = False, unpacked: bool = False, taps_outer: bool = False) -> dict:
    import torch

    record = {"problem": path.stem, "path": str(path), "dtype": dtype or "as written"}
    spec, sources, notes = modules(path, dtype, "gfx942" if smoke or torch.version.hip else "sm_90", smoke, quick,
                                   unpacked, taps_outer)
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
        file = workdir / f"{path.stem}_{dtype or 'asis'}_{label.replace('@', '_at_')}.py"
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
    del expected
    if smoke:
        return record
    if not quick or with_compile:
        compiled = torch.compile(model)
        fns["torch.compile"] = lambda xs: compiled(*xs)
    from kerntailor.measure.stopwatch import measure

    timings = measure(fns, [inputs], budget_s=1.0 if quick else 2.0, max_runs=50 if quick else 100)
    t = record["times_us"] = {n: tm.median_s * 1e6 for n, tm in timings.items()}
    record["quartiles_us"] = {n: [tm.q1_s * 1e6, tm.q3_s * 1e6] for n, tm in timings.items()}
    gen = {k: v for k, v in t.items() if k.startswith("gen_")}
    lib = {k: v for k, v in t.items() if k.startswith("library")}
    for name, prefix in (("generated", "gen_"), ("pw", "gen_pw_"), ("ig", "gen_ig_"), ("ph", "gen_ph_"),
                         ("tp", "gen_tp_"), ("tc", "gen_tc_"),
                         ("uw", "gen_"), ("to", "gen_")):   # uw: the weight read through its view; to: taps outer
        mine = {k: v for k, v in gen.items() if k.startswith(prefix) and k.endswith("_uw") == (name == "uw")
                and k.endswith("_to") == (name == "to")}
        if mine:
            best = min(mine, key=mine.get)
            record[f"best_{name}"] = best
            record[f"eager_over_{name}"] = t["eager"] / mine[best]   # > 1: the generated one is faster
    if gen:
        best = min(gen, key=gen.get)
        if lib:
            record["library_over_generated"] = min(lib.values()) / gen[best]
        if "torch.compile" in t:
            record["compile_over_generated"] = t["torch.compile"] / gen[best]
    return record


def main(argv: list[str] | None = None) -> int:
    return run_files("conv_gen_probe.py", __doc__, bench_file, argv, free_between=True,
                     flags=(("quick", "about 120 s for five files in two dtypes on an H200: no torch.compile, no "
                                      "channels-last library module, no EXTRA_TILES, 1 s of timing per file"),
                            ("with_compile", "time torch.compile even with --quick"),
                            ("unpacked", "a transposed convolution's forms also with the weight read through its own "
                                         "view (the form before the packed weight: _uw)"),
                            ("taps_outer", "a stride-1 transposed convolution also in the gather form with its taps "
                                           "outer (_to)")))


if __name__ == "__main__":
    raise SystemExit(main())
