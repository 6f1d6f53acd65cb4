"""Reductions over a convolution's spatial axes (global pooling), fused into the conv kernel as a column tail
(plan/row_tail.py's column_tail, codegen/conv.py with codegen/gemm/tail.py's write_column_tail; issue #19 item 2).

Unit tier: the planner puts adaptive_avg_pool2d(1) (a sum over (2, 3), then a division), a keepdim mean (then a
scale, a bias per channel) and amax over the spatial axes into the conv group, whose one output is the (n, channel)
value; a grouped convolution, a reduction over only some spatial axes and a tail that reads a per-image value keep
the reduction as a kernel of its own.
Interpreter tier: the generated modules pass the referee with an image's positions in one tile (no partials) and in
several (partials, combined in tile order by the image's last tile), fp32 and bf16, a spatial size that varies per
call, a bias per channel after the mean; the conv output is never allocated.
Compile tier: the fused kernel builds for sm_90 with matrix instructions and no spills.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import judge, make_module, prepared
from kerntailor.plan.row_tail import column_tail

DATA = Path(__file__).parent / "data" / "conv"
AVGPOOL, MEAN, AMAX = (DATA / f"{n}.py" for n in ("conv2d_gelu_avgpool", "conv2d_relu_mean_spatial",
                                                 "conv2d_amax_spatial"))

PROBLEM = '''"""{doc}"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, groups={groups})
        self.bias = nn.Parameter(torch.randn(8, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {tail}


def get_inputs():
    return [torch.randn(2, 4, 6, 5)]


def get_init_inputs():
    return []
'''


def _plan(path: Path):
    _, _, gen, plan = prepared(path)
    return gen, plan


# --- unit ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "op"), [(AVGPOOL, "sum"), (MEAN, "sum"), (AMAX, "max")],
                         ids=["adaptive_avg_pool", "mean_keepdim", "amax"])
def test_a_reduction_over_the_spatial_axes_joins_the_conv_group(path, op):
    gen, plan = _plan(path)
    (group,) = plan.groups
    assert group.family == "conv" and group.reduce_axes == (2, 3)
    tail = column_tail(gen.graph, list(group.nodes), set(group.outputs))
    assert tuple(r.op for r in tail.reductions) == (op,)
    (out,) = group.outputs   # one value per (image, channel): the convolution's output is never written
    conv = gen.graph.node(group.anchor)
    assert gen.graph.node(out).out.numel == conv.out.shape[0] * conv.out.shape[1]


@pytest.mark.parametrize(("groups", "tail"), [
    (2, "self.conv(x).mean(dim=(2, 3))"),
    (1, "self.conv(x).amax(dim=3)"),
    (1, "self.conv(x).mean(dim=(2, 3), keepdim=True) + x[:, :1, :1, :1]")],
    ids=["grouped", "one_axis", "reads_a_per_image_value"])
def test_a_spatial_reduction_the_tail_does_not_cover_stays_its_own_kernel(groups, tail, tmp_path):
    path = tmp_path / "conv_reduce.py"
    path.write_text(PROBLEM.format(doc="A conv then a reduction the column tail does not take.", groups=groups,
                                   tail=tail))
    _, plan = _plan(path)
    (conv,) = [g for g in plan.groups if g.family == "conv"]
    assert not conv.reduce_axes and "reduction" in [g.family for g in plan.groups]


def test_a_per_channel_bias_after_the_pooling_joins_the_tail(tmp_path):
    path = tmp_path / "conv_mean_bias.py"
    path.write_text(PROBLEM.format(doc="A conv, a keepdim mean over (2, 3), then a bias per channel.", groups=1,
                                   tail="self.conv(x).mean(dim=(2, 3), keepdim=True) + self.bias"))
    _, plan = _plan(path)
    (group,) = plan.groups
    assert group.family == "conv" and group.reduce_axes == (2, 3)


# --- interpreter ---------------------------------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "dtype", "block_m"), [
    (AVGPOOL, None, 16), (AVGPOOL, "bf16", 32), (MEAN, None, 16), (AMAX, "bf16", 16), (AMAX, None, 32)],
    ids=["avgpool_2tiles", "avgpool_1tile_bf16", "mean_varying", "amax_2tiles_bf16", "amax_1tile"])
def test_the_fused_kernel_passes_the_referee(path, dtype, block_m, tmp_path):
    # 30 positions an image at the traced sizes (avgpool, amax): BLOCK_M 16 splits them over two tiles (partials,
    # combined by the image's last tile), 32 takes them in one; the mean's 12 to 54 positions vary per call. The
    # positions are sizes of the call, so the host picks the form per call (COL_ONE_TILE) and the referee's
    # variants take both
    module = make_module(path, {"conv": {"BLOCK_M": block_m, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 1}}, dtype)
    (kernel,) = module.kernels
    assert "col_arrived = tl.atomic_add(col_counters_ptr + img * tiles_n + pid_n, 1" in kernel.source
    assert f"COL_ONE_TILE=int(conv0_o2 * conv0_o3 <= {block_m})" in module.source
    assert "conv0 = torch.empty(" not in module.source   # the conv's output is never allocated
    verdict = judge(path, module, tmp_path, dtype)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{kernel.source}"


# --- compile -------------------------------------------------------------------------------------------------

@pytest.mark.compile
def test_the_fused_kernel_cross_compiles_for_sm_90(tmp_path):
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    module = make_module(AVGPOOL, None, "bf16", arch="sm_90")
    (kernel,) = module.kernels
    with BuildPool(None, timeout_s=300) as pool:
        (r,) = pool.build([kernel_source(module.source, kernel, prepared(AVGPOOL, "bf16")[2])],
                          [get_target("h200")], cache=BuildCache(tmp_path))
    assert r.ok, r.error
    assert r.facts.matrix_instr_count > 0 and r.facts.spills == 0
