"""The issue's "library convolution + generated tail" (#19 item 3): a conv group whose convolution is the library's
(aten.convolution: cuDNN / MIOpen) and whose epilogue and row or column tail run in one generated kernel over its
output's tiles (knob LIBRARY, codegen/conv_library.py), NCHW or channels-last (knob channels_last), offered to the
search in measured mode beside the generated schedules, as the GEMM's library product is (tests/test_gemm_library.py).

Unit tier: the module's host line is the library group's call and the kernel reads its tile (no tl.dot); the library
forms clear the generated product's knobs; what the knob refuses (a convolution alone in its group, channels_last on
a 1-d convolution or without LIBRARY); the search times every form and tile and keeps the fastest; the pipeline's
referee allows exactly aten.convolution for such a module. Interpreter tier: the modules pass the referee as the
pipeline runs it (that call, those operators) with pointwise, row and column tails, 1-d / 2-d / 3-d, grouped,
transposed, fp32 and bf16, in both layouts; another call or another operator fails it. Compile tier: the kernels
build for sm_90 and gfx942.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import FakeTimer, make_module, prepared
from kerntailor.codegen import CodegenUnsupported, default_schedule
from kerntailor.codegen.conv import ConvSchedule
from kerntailor.codegen.conv_library import takes_library
from kerntailor.generate.group_search import library_product_offered, library_product_trial
from kerntailor.generate.pipeline import LIBRARY_PRODUCTS
from kerntailor.generate.run import Run
from kerntailor.targets import get_target
from kerntailor.verify import VerifySettings, verify_candidate

DATA = Path(__file__).parent / "data" / "conv"
MIN_TANH = DATA / "conv2d_min_tanh.py"       # conv + scale + min over the channels + tanh: a row tail
CONV_OPS, CONV_CALLS = LIBRARY_PRODUCTS["conv"]
SMALL = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 1}   # several tiles per axis (24 channels: partials)


def _library_module(path: Path, dtype: str | None, channels_last: bool = False, arch: str = "sm_90", **knobs):
    return make_module(path, {"conv": dict(SMALL, LIBRARY=1, channels_last=channels_last, **knobs)}, dtype, arch=arch)


# --- unit --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("channels_last", [False, True])
def test_the_kernel_reads_the_librarys_convolution_tile_by_tile(channels_last):
    module = _library_module(MIN_TANH, "bf16", channels_last)
    (kernel,) = module.kernels
    assert "tl.dot" not in kernel.source and "conv0_lib_ptr" in kernel.source
    assert "x_ptr" not in kernel.source and "p_conv_weight_ptr" not in kernel.source   # the library read them
    assert "k0_conv0_lib = torch.ops.aten.convolution.default(" in module.source
    if channels_last:
        assert "_channels_last_input(x, torch.channels_last)" in module.source
        assert "_channels_last_weight(p_conv_weight, torch.channels_last)" in module.source
        assert ".contiguous(memory_format=torch.channels_last)  # the library's convolution" in module.source
        assert "mw[:, None] * " in kernel.source     # (N, H, W, C): a row's channels contiguous
    else:
        assert "_channels_last" not in module.source and ").contiguous()  # the library's" in module.source
    assert kernel.library_calls == ()   # the pipeline allows the call by the schedule (LIBRARY_PRODUCTS)


def test_the_library_forms_clear_the_generated_products_knobs():
    gen, plan = prepared(DATA / "conv2d_taps_dilated_padded.py")[2:]
    (group,) = [g for g in plan.groups if g.family == "conv"]
    best = default_schedule(gen, group).retune({"taps": True, "stage": True, "BLOCK_K": 16})
    nchw, nhwc = best.library_forms()
    assert (nchw.LIBRARY, nchw.channels_last, nhwc.channels_last) == (1, False, True)
    assert not (nchw.taps or nchw.stage or nchw.phases or nchw.pointwise or nchw.taps_outer)
    assert nchw.library_product and not best.library_product
    assert set(nhwc.knobs()) - set(ConvSchedule.shown) == {"LIBRARY", "channels_last"}


@pytest.mark.parametrize("path, knobs, why", [
    (DATA / "conv2d_nobias_maxpool_relu.py", {"LIBRARY": 1}, "plain convolution"),
    (DATA / "conv2d_sub_hardswish_maxpool.py", {"LIBRARY": 1}, "pointwise epilogue another group reads"),
    (DATA / "conv1d_relu_mean.py", {"LIBRARY": 1, "channels_last": True}, "no channels-last memory format"),
    (MIN_TANH, {"channels_last": True}, "takes the library's convolution"),
])
def test_what_the_knob_refuses(path, knobs, why):
    with pytest.raises(CodegenUnsupported, match=why):
        make_module(path, {"conv": knobs}, None, arch="sm_90")


@pytest.mark.parametrize("name, takes", [
    ("conv2d_min_tanh.py", True),                    # a reducing tail (min over the channels)
    ("conv2d_gelu_avgpool.py", True),                # a reducing tail (the global average)
    ("conv2d_groups_bias_relu.py", True),            # a pointwise epilogue whose result leaves the module
    ("conv2d_sub_hardswish_maxpool.py", False),      # a pointwise epilogue the pool's group reads
    ("conv2d_nobias_maxpool_relu.py", False),        # nothing after the convolution in its group
])
def test_which_conv_groups_take_the_knob(name, takes):
    """The knob where it fuses at least as well as generate's second pass; else the second pass's plan (the
    library group, its pointwise epilogue fused into the next group as a prologue) is the better library form."""
    gen, plan = prepared(DATA / name)[2:]
    (conv,) = [g for g in plan.groups if g.family == "conv"]
    assert takes_library(conv, gen.graph) is takes
    assert library_product_offered(conv, gen.graph, "ieee") is takes
    assert not library_product_offered(conv, gen.graph, "fp8-row")


def test_the_search_times_every_layout_and_tail_tile_and_keeps_the_fastest(tmp_path):
    spec, _, gen, plan = prepared(MIN_TANH, "bf16")
    (group,) = plan.groups
    run = Run(None, get_target("h200"), spec, None, tmp_path, lambda *a: None, gen=gen, plan=plan)
    best = default_schedule(gen, group)
    timer = FakeTimer(lambda k: 3e-4 if k.get("channels_last") and k["BLOCK_M"] == 128 else 5e-4)
    chosen, ev = library_product_trial(run, {group.name: best}, group, timer)
    assert ev.seconds == 3e-4 and len(timer.sources) == 8   # NCHW and channels-last, each the best's tile + 3
    assert chosen.LIBRARY == 1 and chosen.channels_last and (chosen.BLOCK_M, chosen.num_warps) == (128, 8)
    assert ev.config.family == "conv-library"
    assert all("torch.ops.aten.convolution.default(" in s for s in timer.sources)
    assert sum("_channels_last_input(" in s for s in timer.sources) == 4
    assert library_product_trial(run, {group.name: best}, group, FakeTimer(lambda k: None)) is None
    # a convolution alone in its group: nothing to time (its library group is the second pass's)
    spec, _, gen, plan = prepared(DATA / "conv2d_nobias_maxpool_relu.py")
    (conv,) = [g for g in plan.groups if g.family == "conv"]
    run = Run(None, get_target("h200"), spec, None, tmp_path, lambda *a: None, gen=gen, plan=plan)
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    none = FakeTimer(lambda k: 1e-4)
    assert library_product_trial(run, schedules, conv, none) is None and not none.sources


def test_the_pipelines_referee_allows_exactly_the_convolution_for_a_library_conv_module(monkeypatch, tmp_path):
    from kerntailor.generate import pipeline

    seen = []
    monkeypatch.setattr(pipeline, "verify_candidate", lambda problem, path, settings, watch: seen.append(settings))
    run = SimpleNamespace(settings=pipeline.GenerateSettings(), library_ops=frozenset({"aten.cat.default"}),
                          measured=False, problem=None, progress=lambda *a: None)
    pipeline._referee(run, tmp_path / "kernel.py", frozenset({"conv"}))
    pipeline._referee(run, tmp_path / "kernel.py", frozenset({"conv", "matmul"}), frozenset({"torch.ops.aten.cat"}))
    assert (seen[0].allowed_ops, seen[0].allowed_calls) == (CONV_OPS, CONV_CALLS)
    assert seen[1].allowed_ops == CONV_OPS | LIBRARY_PRODUCTS["matmul"][0] | {"aten.cat.default"}
    assert seen[1].allowed_calls == CONV_CALLS | {"torch.matmul", "torch.ops.aten.cat"}


# --- interpreter -------------------------------------------------------------------------------------------------

def _judged(path: Path, source: str, dtype: str | None, tmp_path: Path, **settings):
    out = tmp_path / "kernel.py"
    out.write_text(source)
    return verify_candidate(prepared(path, dtype)[0], out, VerifySettings(**settings))


@pytest.mark.interpreter
@pytest.mark.parametrize("name, dtype, channels_last", [
    ("conv2d_groups_bias_relu", None, False),        # 2-d, grouped, pointwise tail
    ("conv2d_min_tanh", "bf16", True),               # row tail over 24 channels in two tiles (partials)
    ("conv2d_relu_mean_spatial", None, True),        # column tail (global mean pool)
    ("conv3d_scale", None, False),                   # 3-d, pointwise tail
    ("conv3d_scale", "bf16", True),
    ("convt2d_logsumexp", "bf16", False),            # transposed, row tail
    ("conv1d_relu_mean", None, False),               # 1-d
])
def test_the_library_conv_with_a_generated_tail_passes_the_referee(name, dtype, channels_last, tmp_path):
    path = DATA / f"{name}.py"
    module = _library_module(path, dtype, channels_last)
    # as the pipeline judges it: that call written, the operators it dispatches to run, nothing else
    verdict = _judged(path, module.source, dtype, tmp_path, allowed_ops=CONV_OPS, allowed_calls=CONV_CALLS)
    if not verdict.passed and channels_last and verdict.draw == "special" and _host_channels_last_specials(path, dtype):
        # the host library's own channels-last convolution misplaces NaN and Inf (shown by the probe): the referee
        # rightly fails the module on this host's special draw; the rest of its cases judge the generated tail
        verdict = _judged(path, module.source, dtype, tmp_path, allowed_ops=CONV_OPS, allowed_calls=CONV_CALLS,
                          special=False)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{module.source}"


def _host_channels_last_specials(path: Path, dtype: str | None, seeds: int = 4) -> bool:
    """Whether this host's library convolution, run channels-last (input and weight), gives NaN or Inf where the
    float64 convolution of the same special-values draw gives another kind of value: oneDNN's bf16 conv3d on an AMD
    EPYC host gave NaN at 5-30 of ~300 outputs a draw where float64 gave finite or infinite values (2026-12-06; the
    CI hosts before passed). A library artifact, not the generated tail's: the referee fails such a module."""
    import torch

    from kerntailor.verify.draws import SPECIAL, draw_inputs
    from kerntailor.verify.referee import special_variant

    spec = prepared(path, dtype)[0]
    variant = special_variant(spec, [v.name for v in spec.variants])

    def kind(t):
        return torch.where(t.isnan(), 0, torch.where(t.isposinf(), 1, torch.where(t.isneginf(), 2, 3)))

    for seed in range(seeds):
        model = spec.make_model(variant, "cpu", seed)
        inputs = draw_inputs(spec, variant, SPECIAL, seed, torch.device("cpu"))
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(inputs[0].dim())
        if fmt is None:
            return False
        with torch.no_grad():
            got = model.to(memory_format=fmt)(*(x.contiguous(memory_format=fmt) for x in inputs))
            exact = model.double()(*(x.double() for x in inputs)).to(got.dtype)
        if bool((kind(got) != kind(exact)).any()):
            return True
    return False


@pytest.mark.interpreter
def test_a_library_conv_module_that_calls_or_runs_anything_else_fails_the_referee(tmp_path):
    module = _library_module(MIN_TANH, None)
    strict = _judged(MIN_TANH, module.source, None, tmp_path)   # nobody else's module may call the convolution
    assert strict.check == "static" and "convolution" in strict.reason
    other = module.source.replace(
        "    k0_conv0_lib = torch.ops.aten.convolution.default(",
        "    k0_other = torch.ops.aten.mm.default(x.flatten(1), x.flatten(1).t())\n"
        "    k0_conv0_lib = torch.ops.aten.convolution.default(", 1)
    assert other != module.source
    verdict = _judged(MIN_TANH, other, None, tmp_path, allowed_ops=CONV_OPS, allowed_calls=CONV_CALLS)
    assert verdict.check == "static" and "aten.mm" in verdict.reason
    # the call allowed, but not what it runs: the observed check names the convolution
    verdict = _judged(MIN_TANH, module.source, None, tmp_path, allowed_ops=LIBRARY_PRODUCTS["matmul"][0],
                      allowed_calls=CONV_CALLS, variants=("small",))
    assert verdict.check == "library" and "aten.convolution.default" in verdict.reason


# --- compile -----------------------------------------------------------------------------------------------------

@pytest.mark.compile
@pytest.mark.parametrize("name, dtype, channels_last", [
    ("conv2d_min_tanh", "bf16", True), ("conv2d_min_tanh", None, False), ("conv2d_relu_mean_spatial", "bf16", False),
    ("conv3d_scale", "bf16", True), ("convt2d_logsumexp", None, True),
])
def test_the_tail_kernels_cross_compile_for_sm_90_and_gfx942(name, dtype, channels_last, tmp_path):
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source

    path = DATA / f"{name}.py"
    results = []
    for arch, target in (("sm_90", "h200"), ("gfx942", "mi300x")):
        module = _library_module(path, dtype, channels_last, arch=arch, BLOCK_M=64, BLOCK_N=32, num_warps=4)
        (kernel,) = module.kernels
        with BuildPool(None, timeout_s=300) as pool:
            results += pool.build([kernel_source(module.source, kernel, prepared(path, dtype)[2])],
                                  [get_target(target)], cache=BuildCache(tmp_path))
    assert all(r.ok for r in results), [r.error for r in results]
