"""Reductions after a transposed convolution fused into its kernel (issue #19, the level-2 transposed set): a row
tail (logsumexp, softmax over the channels) and a column tail (a mean over every spatial axis), as the forward
convolution takes them (plan/row_tail.py, codegen/conv.py). The phase form's rows are one output phase's, so a group
with a tail takes the gather form only, at any stride.

Unit tier: the planner puts the reductions in the conv group; its sizes offer no phase form and its default schedule
is the gather form; a schedule asking for the phases is refused by name.
A tail member may read a tensor outside the group where the tile indexes it: a per-channel one (softmax's output
plus a bias (C, 1, 1)), a scalar one in a per-row member (logsumexp minus a (1, 1, 1, 1) parameter).
Interpreter tier: the fused modules pass the referee (stride 2 with padding and output_padding: the taps that the
stride does not divide masked in the gather form), the channels over two tiles (partials) or one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import judge, make_module, prepared
from kerntailor.codegen import CodegenUnsupported, default_schedule
from kerntailor.codegen.conv import work_sizes

DATA = Path(__file__).parent / "data" / "conv"
LOGSUMEXP, SOFTMAX, MEAN, LOGSUMEXP_BIAS = (DATA / f"{n}.py" for n in (
    "convt2d_logsumexp", "convt2d_softmax", "convt2d_mean_spatial", "convt3d_logsumexp_bias"))


@pytest.mark.parametrize(("path", "axes"), [(LOGSUMEXP, (1,)), (SOFTMAX, (1,)), (MEAN, (2, 3)),
                                           (LOGSUMEXP_BIAS, (1,))],
                         ids=["logsumexp", "softmax_bias", "mean_spatial", "logsumexp_scalar_bias"])
def test_a_reduction_after_a_transposed_convolution_joins_its_group_in_the_gather_form(path, axes):
    _, _, gen, plan = prepared(path)
    (group,) = plan.groups
    assert group.family == "conv" and gen.graph.node(group.anchor).transposed and group.reduce_axes == axes
    sizes = work_sizes(gen, group)
    assert "phases" not in sizes and not default_schedule(gen, group).phases
    assert ("whole_row" in sizes) == (path == SOFTMAX)
    with pytest.raises(CodegenUnsupported, match="implicit GEMM form only"):
        make_module(path, {"conv": {"phases": True}})


@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "knobs"), [
    (LOGSUMEXP, {"BLOCK_N": 16}), (SOFTMAX, {"BLOCK_N": 32}), (MEAN, {"BLOCK_N": 16}),
    (LOGSUMEXP_BIAS, {"BLOCK_N": 16}), (LOGSUMEXP_BIAS, {"BLOCK_N": 32})],
    ids=["logsumexp_2tiles", "softmax_bias_1tile", "mean_spatial_2tiles", "logsumexp_scalar_bias_2tiles",
         "logsumexp_scalar_bias_1tile"])
def test_the_fused_transposed_kernel_passes_the_referee(path, knobs, tmp_path):
    module = make_module(path, {"conv": {"BLOCK_M": 16, "BLOCK_K": 16, "num_warps": 1} | knobs})
    (kernel,) = module.kernels
    assert "conv0 = torch.empty(" not in module.source   # the convolution's output is never allocated
    verdict = judge(path, module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{kernel.source}"
