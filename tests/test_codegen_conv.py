"""The generated convolution (codegen/conv.py: implicit GEMM + fused epilogue, #19 items 1, 2, 5).

Unit tier: the plan offers conv groups with their pointwise tail as the epilogue, the sizes, the schedule's checks,
its search space (the default schedule and seeds inside it) and the cost model's matrix terms; what the writer
refuses on sight (fp64) is a library group from the first plan on; the tap order over channels-last copies is the
default where a tap's channels fill a K step, its K padding priced; a depthwise convolution takes the window loop; a
transposed one the gather form, both reading the weight packed by the host (its layout and cache checked against a
direct reading). Interpreter tier: the generated modules pass the referee on tiny conv1d / conv2d /
conv3d problems with stride, padding, dilation, groups and an epilogue, fp32 and bf16, under small tiles (several
tiles per axis, a K tail), in both K orders (the tap order: a channel tail per tap, with and without the
channels-last copies), on a depthwise one with two channels per group, and on transposed conv1d / 2d / 3d with
stride 1 and 2-3, padding, output_padding, dilation, groups, both forms, and phases with no tap at all (gcd(stride,
dilation) = 2 not dividing phase + padding), and one with the weight read through its own view; kernel.py is
standalone. Compile tier: the kernels build for gfx942 and sm_90 with matrix instructions (a transposed
convolution's packed weight with cp.async on sm_90).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import L1, judge, make_module, prepared
from kerntailor.codegen import CodegenUnsupported, GroupUnsupported, default_schedule, refused_anchors
from kerntailor.codegen.conv import ConvSchedule
from kerntailor.codegen.schedule import ScheduleError
from kerntailor.costmodel import AnalyticalModel
from kerntailor.costmodel.candidate import Candidate
from kerntailor.generate.kernels import group_work
from kerntailor.search.families import loop_trips, make_space, padding_factor, program_count, seed_knobs
from kerntailor.targets import get_target

DATA = Path(__file__).parent / "data" / "conv"
TRANSPOSED = Path(__file__).parent / "data" / "codegen_fused" / "tiny_conv2d.py"   # float64: refused
CONVT1D, CONVT2D, CONVT3D, CONVT_GCD = (DATA / f"{n}.py" for n in (
    "convt1d_strided_dilated_bias_relu", "convt2d_groups_padded", "convt3d_bias", "convt2d_dilation_shares_stride"))
CONV1D, CONV2D, CONV3D, DEPTHWISE, POINTWISE, LONG_K = (DATA / f"{n}.py" for n in (
    "conv1d_strided_bias_relu", "conv2d_groups_bias_relu", "conv3d_scale", "depthwise2d_multiplier_bias_relu6",
    "pointwise2d_bias_residual_relu", "long_reduction_conv2d"))
TAPS = DATA / "conv2d_taps_dilated_padded.py"
CONVT_OUTER = DATA / "convt2d_stride1_taps_outer.py"
GRADS_CONV = Path(__file__).parent / "data" / "grads" / "conv_relu.py"   # a float64 Conv2d
SMALL = {"conv": {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 1}}   # several tiles, a K tail


def _conv_group(path: Path, dtype: str | None = None):
    _, _, gen, plan = prepared(path, dtype)
    (group,) = [g for g in plan.groups if g.family == "conv"]
    return gen, plan, group


# --- unit ----------------------------------------------------------------------------------------------------

def test_the_plan_offers_a_conv_group_with_its_pointwise_tail_as_the_epilogue():
    gen, plan, group = _conv_group(CONV2D)
    assert [g.family for g in plan.groups] == ["conv"]
    conv = gen.graph.node(group.anchor)
    assert group.nodes[0] == conv.name and len(group.nodes) == 3 and group.outputs == (group.nodes[-1],)
    # 2 groups: M = groups x N x OH x OW (9 -> 5 rows at stride 2, pad 1; 11 -> 9 columns at dilation 2), 4 output
    # channels per group, K = 3 input channels per group x a 3 x 2 kernel
    work, sizes = group_work(gen, group, "fp32")
    assert sizes == {"M": 2 * 2 * 5 * 9, "N": 4, "K": 3 * 6, "taps": 1, "C": 3}   # 3 channels: the gather order
    assert work.matrix and work.flops == conv.flops() and work.vector_flops > 0   # bias and relu: vector work


@pytest.mark.parametrize("target", ["h200", "mi300x"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_default_schedule_and_the_seeds_lie_in_the_space_and_the_cost_model_takes_them(target, dtype):
    gen, _, group = _conv_group(CONV2D)
    t = get_target(target)
    sizes = {"M": 4096, "N": 128, "K": 576}   # a ResNet-like layer's implicit GEMM
    space = make_space("conv", t, dtype=dtype, **sizes)
    default = default_schedule(gen, group)
    assert isinstance(default, ConvSchedule) and not space.violations(space.config_of(default))
    seeds = seed_knobs("conv", t, dtype=dtype, **sizes)
    assert seeds and all(not space.violations(space.config_of(default.retune(k))) for k in seeds)
    config = space.config_of(default.retune(seeds[0]))
    assert program_count(config, sizes) == -(-4096 // config["BLOCK_M"]) * -(-128 // config["BLOCK_N"])
    assert loop_trips(config, sizes) == -(-576 // config["BLOCK_K"])
    work, _ = group_work(gen, group, dtype)
    model = AnalyticalModel(t)
    small, big = (model.explain(Candidate(space.config_of(default.retune(k)), work)).seconds
                  for k in ({"BLOCK_M": 16, "BLOCK_N": 16}, {"BLOCK_M": 64, "BLOCK_N": 64}))
    assert 0 < small and 0 < big


@pytest.mark.unit
def test_the_tap_order_over_channels_last_copies_is_the_default_where_a_taps_channels_fill_a_k_step():
    """K in (kernel position, input channel) order over channels-last copies of the input and the weight
    (codegen/conv.py, #19): 36 input channels take it by default (BLOCK_K 32: a tile and a tail of 4 a tap);
    two kernels before the convolution copy x and W into scratch (B, *S, C), and each step reads one tap's
    contiguous channels under a per-row padding mask (no per-element window arithmetic). CONV2D's 3 channels a group
    keep the weight's order (a tap's channels would fill 3 of 16), and so would 16 to 31. The space offers the other
    values second and keeps stage with taps; the cost model prices the tap order's per-tap channel tail."""
    from kerntailor.codegen.conv import takes_taps

    gen, _, group = _conv_group(TAPS)
    _, sizes = group_work(gen, group, "bf16")
    assert sizes == {"M": 2 * 5 * 5, "N": 12, "K": 36 * 15, "taps": 2, "C": 36}
    default = default_schedule(gen, group)
    assert default.taps and default.stage and default.BLOCK_K == 32
    (kernel,) = make_module(TAPS, dtype="bf16").kernels
    assert [k.kernel_name for k in kernel.launches] == [f"{kernel.kernel_name}_stage0", f"{kernel.kernel_name}_stage1",
                                                        kernel.kernel_name]
    assert [s.buffer for k in kernel.before for s in k.scratch] == ["x_cl", "w_cl"]
    assert "tap = kt // ct" in kernel.source and "[:, None] & cmask[None, :]" in kernel.source
    assert "x_cl_ptr + " in kernel.source and "(ci)[None, :]" in kernel.source   # channels contiguous
    assert "kk // " not in kernel.source   # no per-element unravel of K
    (plain,) = make_module(TAPS, {"conv": {"stage": False}}, "bf16").kernels
    assert not plain.before and "tap = kt // ct" in plain.source and "x_cl" not in plain.source
    assert not default_schedule(*_conv_group(CONV2D)[::2]).taps
    assert "kk // 6" in make_module(CONV2D).kernels[0].source
    assert takes_taps(32) and not takes_taps(31) and not takes_taps(3)
    h200 = get_target("h200")
    sizes |= {"M": 1 << 20}   # a layer the seeds' 128 rows fit
    space = make_space("conv", h200, dtype="bf16", **sizes)
    assert space.knob("taps").values == space.knob("stage").values == (True, False)
    assert not space.violations(space.config_of(default))
    assert space.violations(space.config_of(default.retune({"BLOCK_K": 128})))   # wider than a tap's channels
    assert space.violations(space.config_of(default.retune({"taps": False})))   # copies without the tap order
    assert not space.violations(space.config_of(default.retune({"BLOCK_K": 64, "taps": False, "stage": False})))
    seeds = seed_knobs("conv", h200, dtype="bf16", **sizes)
    assert [(s["taps"], s["stage"]) for s in seeds] == [(True, True), (False, False), (True, False)]
    assert seeds[0]["BLOCK_K"] == seeds[1]["BLOCK_K"] == 64   # the old form's seed second
    assert all(not space.violations(space.config_of(default.retune(k))) for k in seeds)
    # 128 output channels: half a tile (128 x 64, 4 warps, 3 stages) is timed too, in the staged tap order
    sizes128 = sizes | {"N": 128, "C": 64, "K": 64 * 9}
    wide = seed_knobs("conv", h200, dtype="bf16", **sizes128)
    assert {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3, "taps": True,
            "stage": True}.items() <= wide[-1].items()
    space128 = make_space("conv", h200, dtype="bf16", **sizes128)
    assert all(not space128.violations(space128.config_of(default.retune(k))) for k in wide)
    taps16, plain16 = (space.config_of(default.retune({"BLOCK_K": 16, "taps": t, "stage": t})) for t in (True, False))
    assert loop_trips(taps16, sizes) == 15 * 3 and loop_trips(plain16, sizes) == -(-540 // 16)
    assert padding_factor(taps16, sizes) / padding_factor(plain16, sizes) == pytest.approx(
        (15 * 48 / 540) / (544 / 540))   # 48 of 36 channels a tap, against one K tail of 4
    with pytest.raises(CodegenUnsupported, match="tap order"):
        make_module(DEPTHWISE, {"conv": {"taps": True}}, "bf16")
    with pytest.raises(CodegenUnsupported, match="take the tap order"):
        make_module(TAPS, {"conv": {"taps": False}}, "bf16")


def test_the_schedule_refuses_what_no_kernel_takes():
    with pytest.raises(ScheduleError, match="BLOCK_K=8"):
        ConvSchedule(BLOCK_M=16, BLOCK_N=16, BLOCK_K=8)
    with pytest.raises(ScheduleError, match="precision"):
        ConvSchedule(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, precision="fp8-row")
    with pytest.raises(CodegenUnsupported, match="tf32x3 is not available for fp32 matmuls on gfx942"):
        make_module(CONV2D, {"conv": {"precision": "tf32x3"}}, arch="gfx942")


def test_what_the_writer_refuses_on_sight_is_a_library_group_from_the_first_plan():
    """fp64 convolutions (a transposed one, tiny_conv2d, and a forward one): their anchors are named by
    refused_anchors, so every plan of codegen's callers (codegen.plan_of, tests' prepared) has them as library groups,
    and the writer refuses them if asked anyway."""
    for path, dtype, why in ((TRANSPOSED, None, "fp64 x fp64"), (GRADS_CONV, None, "fp64 x fp64")):
        _, _, gen, plan = prepared(path, dtype)
        conv = next(n for n in gen.graph.nodes if n.family == "conv")
        assert why in refused_anchors(gen.graph)[conv.name]
        (library,) = [g for g in plan.groups if g.family == "library"]
        assert library.nodes == (conv.name,) and not any(g.family == "conv" for g in plan.groups)
        forced = type(library)("k9", "conv", (conv.name,), library.inputs, library.outputs, library.space)
        with pytest.raises(GroupUnsupported, match=why):
            default_schedule(gen, forced)


def test_a_depthwise_convolution_is_one_tile_over_its_channels_without_tl_dot():
    """level1/depthwise_conv2d (groups = channels = 256): M = N x OH x OW, every channel a column (N = 256), K = the
    3 x 3 window; the kernel walks the window with multiply-adds, each channel reading its own input channel."""
    gen, plan, group = _conv_group(L1 / "depthwise_conv2d.py")
    assert [g.family for g in plan.groups] == ["conv"] and not refused_anchors(gen.graph)
    assert group_work(gen, group, "fp32")[1] == {"M": 16 * 128 * 128, "N": 256, "K": 9}
    schedule = default_schedule(gen, group)
    space = make_space("conv", get_target("h200"), dtype="fp32", M=16 * 128 * 128, N=256, K=9)
    assert not space.violations(space.config_of(schedule))
    (kernel,) = make_module(L1 / "depthwise_conv2d.py").kernels
    assert "tl.dot(" not in kernel.source and "tl.static_range(3)" in kernel.source and "acc += a * b" in kernel.source
    assert "BLOCK_K" not in kernel.source


def test_a_transposed_convolution_is_split_by_phase_or_gathered():
    """ConvTranspose2d (6 -> 8 channels, 2 groups, 3 x 2 kernel, stride (2, 1), dilation (1, 2)): a conv group with
    its epilogue; M = groups x N x OH x OW (5 -> 10 rows: (5 - 1)·2 - 2 + 2 + 1 + 1; 7 -> 9 columns: 7 - 1 + 2 + 1),
    N = Cout / groups = the weight's second axis, K = Cin / groups x a phase's taps at most (2 of 3 rows at stride 2,
    both columns at stride 1: 4 of 6). The default is the phase form (a stride > 1), the gather form the knob's
    other value (K over every tap, masking those the stride does not divide: Kg); no depthwise or pointwise form.
    The cost model's padding prices the zeros each form multiplies: K or Kg over the useful products per output
    (Ku = FLOPs / 2 / (M x N) = 2·420·4·6 / 2 / 1440 = 7)."""
    gen, plan, group = _conv_group(CONVT2D)
    conv = gen.graph.node(group.anchor)
    assert conv.transposed and [g.family for g in plan.groups] == ["conv"] and not refused_anchors(gen.graph)
    work, sizes = group_work(gen, group, "fp32")
    assert sizes == {"M": 2 * 2 * 10 * 9, "N": 4, "K": 3 * 4, "phases": 2, "Kg": 3 * 6, "Ku": 7, "L": 9}
    assert work.flops == conv.flops()
    schedule = default_schedule(gen, group)
    assert schedule.phases and not schedule.pointwise
    t = get_target("h200")
    assert not make_space("conv", t, dtype="bf16", **sizes).violations(make_space(
        "conv", t, dtype="bf16", **sizes).config_of(schedule))
    big = sizes | {"M": 1 << 20, "N": 64, "K": 512}
    seeds, space = seed_knobs("conv", t, dtype="bf16", **big), make_space("conv", t, dtype="bf16", **big)
    assert seeds[0]["phases"] is True and {s["phases"] for s in seeds} == {True, False}
    assert all(not space.violations(space.config_of(schedule.retune(k))) for k in seeds)
    phase, gather = (space.config_of(schedule.retune(k | {"BLOCK_K": 16})) for k in seeds[:1] + seeds[-1:])
    assert loop_trips(phase, sizes) == 1 and loop_trips(gather, sizes) == 2            # K 12 and 18 in steps of 16
    assert padding_factor(gather, sizes) > padding_factor(phase, sizes) >= 12 / 7
    (kernel,) = make_module(CONVT2D).kernels
    assert "split by output phase (2 phases)" in kernel.source and "tl.dot(a, b, acc" in kernel.source
    loop = kernel.source.split("for kt in")[1].split("acc = ")[0]
    assert "h0 = t0 - j0" in loop and "==" not in loop       # the phase's taps: no divisibility test in the loop
    (gather,) = make_module(CONVT2D, {"conv": {"phases": False}}).kernels
    assert "Transposed (gather form)" in gather.source
    assert "v0 = u0 // 2" in gather.source and "(v0 * 2 == u0)" in gather.source   # stride 2: divisible taps only
    assert "v1 = u1\n" in gather.source                                             # stride 1: no division
    # both forms read the weight packed by the host (per phase, group and output channel a row over K, 8-aligned)
    assert "_convt_weight(p_conv_weight, 2, (((0, 1, 3),), ((0, 1, 2),)), (3, 2), 8)" in make_module(
        CONVT2D, {"conv": {"phases": False}}).source
    assert "_convt_weight(p_conv_weight, 2, (((1, 2, 1), (0, 2, 2)), ((0, 1, 2),)), (2, 2), 8)" in make_module(
        CONVT2D).source
    for source in (kernel.source, gather.source):
        assert "b = tl.load(conv0_wt_ptr + kk[:, None] + w_cols[None, :]" in source
    (unpacked,) = make_module(CONVT2D, {"conv": {"packed_weight": False}}).kernels   # the weight's own view
    # taps outer: one tap per K step (positions and masks per row), the weight packed taps first, channels padded
    outer = make_module(CONVT2D, {"conv": {"phases": False, "taps_outer": True}})
    assert "taps_first=True" in outer.source and "tap = kt // nci" in outer.kernels[0].source
    assert "rmask[:, None] & (ci < 3)[None, :]" in outer.kernels[0].source
    assert "(tap * 8 + ci)" in outer.kernels[0].source
    with pytest.raises(CodegenUnsupported, match="taps_outer"):
        make_module(CONVT2D, {"conv": {"taps_outer": True}})   # the phase form (the default here) has no such loop
    assert "conv0_wt" not in unpacked.source and "p_conv_weight_ptr" in unpacked.source
    assert "aten.convolution" not in make_module(CONVT2D).source
    with pytest.raises(CodegenUnsupported, match="phase form"):
        make_module(CONV2D, {"conv": {"phases": True}})


@pytest.mark.parametrize("target", ["h200", "mi300x"])
def test_a_1x1_convolution_takes_the_pointwise_form_by_its_attributes(target):
    """A 1 x 1 kernel at stride 1, no padding, one group: work_sizes says "pointwise", the default schedule takes the
    form, the space offers it beside the implicit GEMM and the target's seeds start with it; the kernel is W @ x per
    image with positions contiguous (no window index math in the loop). Any other convolution refuses the form."""
    gen, _, group = _conv_group(POINTWISE)
    work, sizes = group_work(gen, group, "bf16")
    assert sizes == {"M": 2 * 5 * 7, "N": 24, "K": 20, "pointwise": 1}
    default = default_schedule(gen, group)
    assert default.pointwise is True
    t = get_target(target)
    space = make_space("conv", t, dtype="bf16", **sizes)
    assert not space.violations(space.config_of(default))
    assert not space.violations(space.config_of(default.retune({"pointwise": False})))
    big = sizes | {"M": 16 * 1024 * 1024, "N": 128, "K": 64}   # KernelBench's 87_conv_pointwise_2D
    seeds = seed_knobs("conv", t, dtype="bf16", **big)
    assert seeds[0]["pointwise"] is True and {s["pointwise"] for s in seeds} == {True, False}
    big_space = make_space("conv", t, dtype="bf16", **big)
    assert all(not big_space.violations(big_space.config_of(default.retune(k))) for k in seeds)
    (kernel,) = make_module(POINTWISE).kernels
    loop = kernel.source.split("for kt in")[1].split("nmask =")[0]
    assert "Pointwise (1 x 1)" in kernel.source and "//" not in loop and "%" not in loop, kernel.source
    assert "of = (n * " in kernel.source and "+ (of)" in kernel.source   # the residual and the store: flat index

    gen2, _, conv2d = _conv_group(CONV2D)   # 3 x 2 kernel, stride 2, groups 2: the implicit GEMM only
    assert "pointwise" not in group_work(gen2, conv2d, "bf16")[1] and not default_schedule(gen2, conv2d).pointwise
    with pytest.raises(CodegenUnsupported, match="pointwise form"):
        make_module(CONV2D, {"conv": {"pointwise": True}})


def test_kernel_py_is_standalone_and_every_size_a_runtime_argument():
    module = make_module(CONV3D)
    tree = ast.parse(module.source)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "kerntailor" not in imported
    (kernel,) = module.kernels
    # batch and the three spatial input sizes vary between the variants: kernel arguments, the host's d0.. and the
    # output sizes it derives (conv0_o..)
    hosts = {e.render(names) for _, e in kernel.size_args for names in [_host_names(module)]}
    assert any("conv0_o" in h for h in hosts) and any(h.startswith("d") for h in hosts), hosts
    assert "tl.dot(a, b, acc" in kernel.source and "% 3" in kernel.source   # the kernel's width, a literal


@pytest.mark.unit
def test_a_long_reduction_runs_in_chunks_decided_per_call_by_the_host():
    """Past LONG_K reduction elements the K loop adds chunks of KCHUNK steps (the tensor cores' round-toward-zero
    accumulation compounds over a long chain); below it the plain loop is the one compiled."""
    from kerntailor.codegen.conv import CHUNK_K, k_chunk_tiles
    from kerntailor.codegen.conv import LONG_K as LONG

    assert k_chunk_tiles(LONG, 32) == 0 and k_chunk_tiles(LONG + 1, 32) == CHUNK_K // 32
    (kernel,) = make_module(LONG_K, SMALL).kernels
    assert "if KCHUNK == 0:" in kernel.source and "acc_sum += acc" in kernel.source
    assert dict(kernel.constexprs)["KCHUNK"] == CHUNK_K // 16   # traced: 4100 x 9 input-channel taps
    (host,) = [text for name, text in kernel.launch.host_constexprs if name == "KCHUNK"]
    assert eval(host.replace("(d1)", "4100")) == CHUNK_K // 16 and eval(host.replace("(d1)", "6")) == 0
    for knobs, taps in (({}, 4), ({"phases": False}, 9)):   # a transposed convolution's two forms: the same loop
        (kernel,) = make_module(DATA / "long_reduction_convt2d.py", {"conv": SMALL["conv"] | knobs}).kernels
        assert "if KCHUNK == 0:" in kernel.source and dict(kernel.constexprs)["KCHUNK"] == CHUNK_K // 16
        (host,) = [text for name, text in kernel.launch.host_constexprs if name == "KCHUNK"]
        assert host == f"0 if (d1) * {taps} <= {LONG} else {CHUNK_K // 16}"


def _host_names(module) -> dict:
    from kerntailor.codegen import host_names

    return host_names(prepared(CONV3D)[2])


@pytest.mark.unit
def test_a_phase_no_tap_reaches_skips_its_k_loop():
    """The phase form (conv_phases.py): where gcd(stride, dilation) > 1 along an axis, a phase that no tap reaches
    there (has<d> false) runs its K loop zero times (its outputs: the epilogue of zeros; the interpreter case
    convt2d_dilation_shares_stride judges them); with gcd 1 every phase has taps and the loop bound is plain."""
    (kernel,) = make_module(CONVT_GCD).kernels
    loop = next(line for line in kernel.source.splitlines() if "for kt in range(0, " in line)
    assert "* (has" in loop and ").to(tl.int32)" in loop, loop
    (plain,) = make_module(CONVT2D).kernels
    assert "has" not in next(line for line in plain.source.splitlines() if "for kt in range(0, " in line)


@pytest.mark.unit
def test_a_stride_one_transposed_convolution_walks_its_taps_outer_by_default_where_their_channels_fill_a_step():
    """At stride 1 the transposed gather form's K steps take one tap's input channels each (taps_outer) by default
    where those fill a step (takes_taps: 36 here; measured on the H200, KernelBench 57 bf16: 3325 us against 9476
    for the packed gather form); the space offers the gather form second and never taps_outer with phases; the
    seeds put it first, the plain gather form's first seed second."""
    gen, _, group = _conv_group(CONVT_OUTER)
    _, sizes = group_work(gen, group, "bf16")
    assert sizes["outer"] == 2 and sizes["C"] == 36 and sizes["phases"] == 1
    default = default_schedule(gen, group)
    assert default.taps_outer and default.stage and not default.phases and default.BLOCK_K == 32
    (kernel,) = make_module(CONVT_OUTER, dtype="bf16").kernels   # x copied channels-last, the weight packed
    assert [s.buffer for k in kernel.before for s in k.scratch] == ["x_cl"] and "x_cl_ptr + " in kernel.source
    (plain,) = make_module(CONVT_OUTER, {"conv": {"stage": False}}, "bf16").kernels
    assert not plain.before and "x_cl" not in plain.source
    h200 = get_target("h200")
    sizes |= {"M": 1 << 20}   # a layer the seeds' 128 rows fit
    space = make_space("conv", h200, dtype="bf16", **sizes)
    assert space.knob("taps_outer").values == space.knob("stage").values == (True, False)
    assert not space.violations(space.config_of(default))
    assert space.violations(space.config_of(default.retune({"taps_outer": False})))   # the copy without taps outer
    assert space.violations(space.config_of(default.retune({"phases": True})))
    assert space.violations(space.config_of(default.retune({"BLOCK_K": 128})))
    seeds = seed_knobs("conv", h200, dtype="bf16", **sizes)
    assert [s["taps_outer"] for s in seeds[:2]] == [True, False] and not seeds[0]["phases"]
    assert seeds[2] == seeds[0] | {"stage": False}   # taps outer over NCHW's x timed too (the old default)
    assert all(not space.violations(space.config_of(default.retune(k))) for k in seeds)
    assert not default_schedule(*_conv_group(CONVT2D)[::2]).taps_outer   # stride 2: the phase form


# --- interpreter ---------------------------------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "dtype", "knobs"), [
    (CONV1D, None, SMALL), (CONV2D, None, SMALL), (CONV2D, "bf16", None), (CONV3D, None, SMALL),
    (DEPTHWISE, "bf16", {"conv": {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 1}}),
    (POINTWISE, None, SMALL), (POINTWISE, "bf16", None),
    (POINTWISE, None, {"conv": SMALL["conv"] | {"pointwise": False}}), (LONG_K, None, SMALL),
    (CONVT1D, None, None), (CONVT2D, "bf16", None), (CONVT3D, None, None),
    (CONVT2D, None, {"conv": SMALL["conv"] | {"phases": False}}), (CONVT_GCD, None, None),
    (TAPS, None, SMALL), (TAPS, "bf16", {"conv": {"stage": False}}),
    (CONV2D, None, {"conv": SMALL["conv"] | {"taps": True, "stage": True}}),
    (CONVT1D, None, {"conv": {"packed_weight": False}}),
    (CONVT2D, None, {"conv": SMALL["conv"] | {"phases": False, "taps_outer": True}}),
    (CONVT3D, "bf16", {"conv": {"phases": False, "taps_outer": True}}), (CONVT_OUTER, "bf16", None),
    (CONVT2D, None, {"conv": SMALL["conv"] | {"phases": False, "taps_outer": True, "stage": True}}),
], ids=["conv1d_fp32", "conv2d_groups_fp32", "conv2d_groups_bf16", "conv3d_fp32", "depthwise_bf16",
        "pointwise_fp32", "pointwise_bf16", "pointwise_as_implicit_gemm_fp32", "long_reduction_chunks_fp32",
        "convt1d_phases_fp32", "convt2d_groups_phases_bf16", "convt3d_phases_fp32", "convt2d_groups_gather_fp32",
        "convt2d_phases_without_taps_fp32", "taps_staged_fp32", "taps_bf16", "conv2d_groups_taps_staged_fp32",
        "convt1d_phases_weight_unpacked_fp32", "convt2d_groups_taps_outer_fp32", "convt3d_taps_outer_bf16",
        "convt2d_stride1_taps_outer_default_bf16", "convt2d_groups_taps_outer_staged_fp32"])
def test_the_generated_convolution_passes_the_referee(path, dtype, knobs, tmp_path):
    module = make_module(path, knobs, dtype)
    assert "aten.convolution" not in module.source and "_conv_kernel" in module.source
    verdict = judge(path, module, tmp_path, dtype)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{module.source}"


# --- compile -------------------------------------------------------------------------------------------------

@pytest.mark.compile
def test_the_conv_kernels_cross_compile_with_matrix_instructions(tmp_path):
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source

    cases = {"sm_90": [(CONV2D, "bf16", None), (CONV3D, None, {"conv": {"precision": "tf32"}}),
                       (DEPTHWISE, "bf16", None), (POINTWISE, "bf16", None),
                       (POINTWISE, None, {"conv": {"precision": "tf32"}}), (CONVT3D, "bf16", None),
                       (CONVT2D, "bf16", {"conv": {"phases": False}}), (TAPS, "bf16", None),
                       (TAPS, "bf16", {"conv": {"stage": False}}),
                       # 3-d taps outer: its tap unravel once reused the rows' q2 (a loop-carried type clash that
                       # only the compiler sees: every 3-d stride-1 default failed to build on the GPU)
                       (CONVT3D, "bf16", {"conv": {"phases": False, "taps_outer": True, "stage": True}}),
                       (CONVT3D, "bf16", {"conv": {"phases": False, "taps_outer": True, "stage": False}})],
             "gfx942": [(CONV2D, "bf16", None), (CONV1D, None, None), (POINTWISE, "bf16", None),
                        (CONVT2D, "bf16", None), (TAPS, "bf16", None),
                        # a 3-d gather form with its taps outer: its tap quotients once shadowed the rows' q2
                        (CONVT3D, "bf16", {"conv": {"phases": False, "taps_outer": True}})]}
    with BuildPool(None, timeout_s=300) as pool:
        for arch, items in cases.items():
            target = get_target("h200" if arch == "sm_90" else "mi300x")
            sources = []
            for path, dtype, knobs in items:
                module = make_module(path, knobs, dtype, arch=arch)
                (kernel,) = [k for k in module.kernels if k.kernel_name.endswith("_conv_kernel")]
                sources.append(kernel_source(module.source, kernel, prepared(path, dtype)[2]))
            for (path, dtype, _), r in zip(items, pool.build(sources, [target], cache=BuildCache(tmp_path))):
                assert r.ok, f"{path.stem} {dtype} on {arch}: {r.error}"
                if path == DEPTHWISE:   # multiply-adds, no matrix instructions
                    assert r.facts.matrix_instr_count == 0 and r.facts.spills == 0, r.facts
                    continue
                prefix = "wgmma" if arch == "sm_90" else "v_mfma"
                assert r.facts.matrix_instr_count > 0, (arch, path.stem, r.facts)
                if arch == "sm_90" and path in (CONVT3D, CONVT2D):   # the packed weight: asynchronous vector copies
                    widths = dict(r.facts.global_load_widths)        # (its own view: scalar ld.global.b16 only)
                    assert any(k.startswith("cp.async") for k in widths), widths
                    assert path != CONVT3D or "cp.async.cg.shared.global.16B" in widths, widths
                assert all(k.startswith(prefix) or k.startswith("mma") for k in r.facts.matrix_instr_kinds), \
                    r.facts.matrix_instr_kinds


def test_the_packed_transposed_weight_holds_each_phases_taps_and_is_made_again_when_the_weight_changes():
    """helpers/convt.py's _convt_weight against a direct reading of its layout: ConvTranspose2d weight (6, 4, 3, 2), 2
    groups; axis 0 at stride 2, padding 1 (phase 0: tap 1; phase 1: taps 0 and 2), axis 1 at stride 2, dilation 2,
    padding 0 (gcd 2: phase 0 every tap, phase 1 none). Rows (ci, j0, j1) of 3 x 2 x 2 = 12, padded to 16 with
    zeros; the copy is kept until the weight changes in place."""
    import torch

    from kerntailor.codegen.conv import Window
    from kerntailor.codegen.conv_phases import phase_taps, tap_counts
    from kerntailor.codegen.helpers.convt import _convt_weight

    wins = [Window(3, 2, 1, 1), Window(2, 2, 0, 2)]
    axes = tuple(phase_taps(w) for w in wins)
    assert axes == (((1, 2, 1), (0, 2, 2)), ((0, 1, 2), (0, 1, 0))) and tap_counts(wins) == [2, 2]
    w = torch.randn(6, 4, 3, 2)
    packed = _convt_weight(w, 2, axes, (2, 2), 8)
    assert packed.shape == (4, 2, 4, 16) and not packed[..., 12:].any()
    rows = packed[..., :12].unflatten(3, (3, 2, 2))                # (phase, g, co, ci, j0, j1)
    for phase, (f0, f1) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        for g in range(2):
            for co in range(4):
                for ci in range(3):
                    for j0 in range(2):
                        for j1 in range(2):
                            c0, step0, n0 = axes[0][f0]
                            c1, step1, n1 = axes[1][f1]
                            expected = w[g * 3 + ci, co, c0 + j0 * step0, c1 + j1 * step1] if j0 < n0 and j1 < n1 \
                                else 0.0
                            assert rows[phase, g, co, ci, j0, j1] == expected
    assert _convt_weight(w, 2, axes, (2, 2), 8) is packed   # kept
    w.mul_(2)                                               # an in-place change (its version) makes it again
    again = _convt_weight(w, 2, axes, (2, 2), 8)
    assert again is not packed and torch.equal(again, 2 * packed)


def test_library_families_plan_every_anchor_of_theirs_as_a_library_group():
    """The generate stage's library alternative (pipeline.LIBRARY_ALTERNATIVES): with "conv" among the library
    families, a convolution the writer would generate is a library group from the first plan, its tail generated."""
    from kerntailor.codegen import plan_of

    gen, plan, _ = _conv_group(L1 / "depthwise_conv2d.py")
    conv = next(n for n in gen.graph.nodes if n.family == "conv")
    assert "library's" in refused_anchors(gen.graph, ("conv",))[conv.name]
    assert [g.family for g in plan_of(gen.graph, ("conv",)).groups][0] == "library"
    assert [g.family for g in plan_of(gen.graph).groups] == ["conv"]


def test_a_generated_convolution_that_loses_on_time_is_tried_again_with_the_librarys(monkeypatch, tmp_path):
    """Measured, a module whose generated convolution lost to eager / torch.compile (GenerateResult.lost_on_time,
    set by the pipeline's decision), where that conv group had no library product timed in its search (a convolution
    alone in its group, before a pool: codegen/conv_library.py's takes_library), is generated once more with the
    library's convolution and a generated tail, and that result is returned with both reasons; a library result for
    another reason (whatever its message says), a plan without a generated convolution, a plain convolution (nothing
    left to generate around the library's), or one whose conv groups the search timed with the library's convolution
    (the LIBRARY knob: one pass) is returned as it is."""
    from dataclasses import replace

    from kerntailor.generate import pipeline
    from kerntailor.generate.pipeline import GenerateResult, GenerateSettings

    gen, plan = prepared(DATA / "conv2d_nobias_maxpool_relu.py")[2:]   # conv alone; with the library's, a pool tail
    slower = "the generated kernel (9.0 us) is slower than the library (5.0 us, eager)"
    base = GenerateResult("p", "h200", "measured", "library", slower, tmp_path / "k.py", tmp_path / "r.json",
                          report={"wall_s": 270.5, "stage_s": {"search": 200.0, "judge": 60.0}}, lost_on_time=True)
    calls = []

    def once(path, settings, progress=None, plan_out=None):
        calls.append(settings)
        if plan_out is not None:
            plan_out.append((plan, gen))
        if settings.library_families:
            return replace(base, status="generated", message="generated 1 kernel(s) and 1 library call(s) (mixed)",
                           lost_on_time=False)
        return base

    monkeypatch.setattr(pipeline, "_generate_once", once)
    result = pipeline._generate_template("p.py", GenerateSettings(target="h200"))
    # the second pass searches (it is not served the first's stored library decision) and records its own
    assert [s.library_families for s in calls] == [(), ("conv",)] and calls[1].use_store and not calls[1].store_lookup
    # the first pass's seconds travel to the second's report (pipeline._first_pass_entry): its wall is both passes'
    assert calls[1].first_pass == (("wall_s", 270.5), ("search_s", 200.0), ("judge_s", 60.0))
    assert calls[0].first_pass == ()
    assert pipeline._first_pass_entry(type("R", (), {"settings": calls[1]})) == {
        "first_pass": {"wall_s": 270.5, "search_s": 200.0, "judge_s": 60.0}}
    assert result.status == "generated" and slower in result.message and "(mixed)" in result.message
    for other in (replace(base, message="no schedule passed the referee (crash: x)", lost_on_time=False),
                  replace(base, lost_on_time=False)):   # the old trigger's words, but not a loss on time
        calls.clear()
        base = other
        assert pipeline._generate_template("p.py", GenerateSettings(target="h200")) == other and len(calls) == 1
    base = replace(base, message="lost", lost_on_time=True)   # the flag decides, not the message
    calls.clear()
    assert pipeline._generate_template("p.py", GenerateSettings(target="h200")).status == "generated"
    assert len(calls) == 2
    gen, plan, _ = _conv_group(DATA / "conv2d_plain.py")   # a plain convolution: the first decision stands
    calls.clear()
    assert pipeline._generate_template("p.py", GenerateSettings(target="h200")) == base and len(calls) == 1
    gen, plan, _ = _conv_group(DATA / "conv2d_min_tanh.py")   # conv + min + tanh: its search timed the library's
    calls.clear()
    assert pipeline._generate_template("p.py", GenerateSettings(target="h200")) == base and len(calls) == 1
    gen, plan = prepared(DATA / "conv2d_sub_hardswish_maxpool.py")[2:]   # an epilogue the pool's group reads:
    calls.clear()                                                        # no knob, the second pass stays
    pipeline._generate_template("p.py", GenerateSettings(target="h200"))
    assert [s.library_families for s in calls] == [(), ("conv",)]
    gen, plan, _ = _conv_group(DATA / "conv2d_min_tanh.py")
    calls.clear()   # under an fp8 policy no library product is timed: the second pass stays
    pipeline._generate_template("p.py", GenerateSettings(target="h200", precision="fp8-row"))
    assert [s.library_families for s in calls] == [(), ("conv",)]
