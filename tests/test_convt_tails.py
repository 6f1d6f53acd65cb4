"""Reductions after a transposed convolution fused into its kernel (issue #19, the level-2 transposed set): a row
tail (logsumexp, softmax over the channels) and a column tail (a mean over every spatial axis), as the forward
convolution takes them (plan/row_tail.py, codegen/conv.py). The phase form's rows are one output phase's: it takes a
row tail whose channels fit one tile (no partials; the rows' flat index from their coordinates; where the channel
count varies per call the host refuses more than the tile holds, by name), the column tail only the gather form.

Unit tier: the planner puts the reductions in the conv group; a row tail's sizes offer the phase form first with one
tile over the channels (a narrower BLOCK_N is refused by the space and by codegen), a column tail's the gather form
only (the phases refused by name).
A tail member may read a tensor outside the group where the tile indexes it: a per-channel one (softmax's output
plus a bias (C, 1, 1)), a scalar one in a per-row member (logsumexp minus a (1, 1, 1, 1) parameter).
Interpreter tier: the fused modules pass the referee (stride 2 with padding and output_padding: the taps that the
stride does not divide masked in the gather form), in the phase form and the gather form.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import judge, make_module, prepared
from kerntailor.codegen import CodegenUnsupported, default_schedule
from kerntailor.codegen.conv import work_sizes
from kerntailor.search.families import make_space
from kerntailor.targets import get_target

DATA = Path(__file__).parent / "data" / "conv"
LOGSUMEXP, SOFTMAX, MEAN, LOGSUMEXP_BIAS = (DATA / f"{n}.py" for n in (
    "convt2d_logsumexp", "convt2d_softmax", "convt2d_mean_spatial", "convt3d_logsumexp_bias"))


@pytest.mark.parametrize(("path", "axes"), [(LOGSUMEXP, (1,)), (SOFTMAX, (1,)), (MEAN, (2, 3)),
                                           (LOGSUMEXP_BIAS, (1,))],
                         ids=["logsumexp", "softmax_bias", "mean_spatial", "logsumexp_scalar_bias"])
def test_a_reduction_after_a_transposed_convolution_joins_its_group(path, axes):
    _, _, gen, plan = prepared(path)
    (group,) = plan.groups
    assert group.family == "conv" and gen.graph.node(group.anchor).transposed and group.reduce_axes == axes
    sizes = work_sizes(gen, group)
    if path == MEAN:   # a column tail: the gather form only (the space has no phases knob, the default the form)
        assert "phases" not in sizes and not default_schedule(gen, group).phases and "whole_row" not in sizes
        space = make_space("conv", get_target("mi300x"), dtype="bf16", **sizes)
        default = space.config_of(default_schedule(gen, group))
        assert "taps_outer" in {k.name for k in space.knobs} and not space.violations(default)
        with pytest.raises(CodegenUnsupported, match="implicit GEMM form only"):
            make_module(path, {"conv": {"phases": True}})
        return
    # a row tail over <= WHOLE_ROW_CHANNELS channels at stride 2: the phase form first, one tile over the channels
    # in both forms (the space refuses a narrower BLOCK_N, codegen too)
    assert sizes["phases"] == 2 and sizes["whole_row"] == 1 and default_schedule(gen, group).phases
    space = make_space("conv", get_target("h200"), dtype="fp32", **sizes)
    assert space.violations(space.config_of(default_schedule(gen, group).retune({"BLOCK_N": 16})))
    with pytest.raises(CodegenUnsupported, match="in one tile"):
        make_module(path, {"conv": {"BLOCK_N": 16}})


@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "knobs"), [
    (LOGSUMEXP, {"BLOCK_N": 32, "phases": True}), (SOFTMAX, {"BLOCK_N": 32, "phases": True}),
    (MEAN, {"BLOCK_N": 16}), (LOGSUMEXP_BIAS, {"BLOCK_N": 32, "phases": True})],
    ids=["logsumexp_phases", "softmax_bias_phases", "mean_spatial_2tiles", "logsumexp_scalar_bias_varying_phases"])
def test_the_fused_transposed_kernel_passes_the_referee(path, knobs, tmp_path):
    module = make_module(path, {"conv": {"BLOCK_M": 16, "BLOCK_K": 16, "num_warps": 1} | knobs})
    (kernel,) = module.kernels
    assert ("# o' along the last axis" in kernel.source) == knobs.get("phases", False)
    if path == LOGSUMEXP_BIAS:   # channels that vary per call: one tile, more than it holds refused by name
        assert "reduces rows of" in module.source and "k0_row_partials" not in module.source
    assert "conv0 = torch.empty(" not in module.source   # the convolution's output is never allocated
    verdict = judge(path, module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{kernel.source}"
