"""Reductions over a convolution's channels, fused into the conv kernel as a row tail (plan/row_tail.py,
codegen/conv.py with codegen/gemm/tail.py's code; issue #19 item 2).

Unit tier: the planner puts min, logsumexp (a shifted sum) and mean (keepdim) over dim 1 into the conv group, and the
conv's output is never an output of it; softmax over the channels joins it too (its output needs the whole row: the
schedules keep every channel in one tile); a grouped convolution keeps its reduction as a kernel of its own; a 1 x 1
convolution with a tail takes the implicit GEMM form (the pointwise form has no row tail and refuses one).
Interpreter tier: the generated modules pass the referee with the channels in one tile (no partials: the tile's
reductions are the rows') and in two (partials combined in tile order), fp32 and bf16, softmax in one; the conv
output is never allocated. Where the channel count varies between calls, the host picks the tile form per call
(ROW_ONE_TILE), and refuses, by name, a softmax over more channels than its one tile holds.
Compile tier: the fused kernel builds for sm_90 with matrix instructions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import judge, make_module, prepared
from kerntailor.codegen import CodegenUnsupported, default_schedule
from kerntailor.codegen.conv import work_sizes
from kerntailor.plan.row_tail import TailReduction, row_tail
from kerntailor.search.families import make_space
from kerntailor.targets import get_target

DATA = Path(__file__).parent / "data" / "conv"
MIN_TANH, LOGSUMEXP, MEAN, SOFTMAX, AMIN_VARYING, SOFTMAX_VARYING = (DATA / f"{n}.py" for n in (
    "conv2d_min_tanh", "conv2d_logsumexp", "conv1d_relu_mean", "conv2d_softmax", "conv2d_amin_varying_channels",
    "conv2d_softmax_varying_channels"))

PROBLEM = '''"""{doc}"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, {kernel}, groups={groups})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(self.conv(x), dim=1)


def get_inputs():
    return [torch.randn(2, 4, 6, 5)]


def get_init_inputs():
    return []
'''


def _conv_group(path: Path):
    _, _, gen, plan = prepared(path)
    return gen, plan, next(g for g in plan.groups if g.family == "conv")


# --- unit ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "reductions"), [
    (MIN_TANH, ("min",)), (LOGSUMEXP, ("max", "sum")), (MEAN, ("sum",))], ids=["min", "logsumexp", "mean"])
def test_a_reduction_over_the_channels_joins_the_conv_group(path, reductions):
    gen, plan, group = _conv_group(path)
    assert [g.family for g in plan.groups] == ["conv"] and group.reduce_axes == (1,)
    tail = row_tail(gen.graph, list(group.nodes), set(group.outputs))
    assert tuple(r.op for r in tail.reductions) == reductions
    # one output, one value per output position: the convolution's output is never written
    (out,) = group.outputs
    conv = gen.graph.node(group.anchor)
    assert gen.graph.node(out).out.numel == conv.out.numel // conv.out.shape[1]
    if path == LOGSUMEXP:   # Σ exp(u − c) with c the guarded max: each tile's c stored beside its partial sum
        assert tail.reductions[0] == TailReduction("max0", "max") and tail.reductions[1].shift


def test_softmax_over_the_channels_joins_the_conv_group_in_one_tile_over_them():
    gen, plan, group = _conv_group(SOFTMAX)
    assert [g.family for g in plan.groups] == ["conv"] and group.reduce_axes == (1,)
    tail = row_tail(gen.graph, list(group.nodes), set(group.outputs), whole_row=True)
    assert tail.whole_row and tail.reductions[1] == TailReduction("sum0", "sum", "max0")
    assert row_tail(gen.graph, list(group.nodes), set(group.outputs)) is None   # no promise of one tile: no tail
    # every schedule spans the 24 channels: the default, the search space's, and none other is written
    assert work_sizes(gen, group)["whole_row"] == 1 and default_schedule(gen, group).BLOCK_N >= 24
    space = make_space("conv", get_target("h200"), dtype="fp32", **work_sizes(gen, group))
    assert space.violations(space.config_of(default_schedule(gen, group).retune({"BLOCK_N": 16})))
    with pytest.raises(CodegenUnsupported, match="every channel in one tile"):
        make_module(SOFTMAX, {"conv": {"BLOCK_N": 16}})


def test_a_grouped_convolution_keeps_its_reduction_as_its_own_kernel(tmp_path):
    path = tmp_path / "grouped_amax.py"
    path.write_text(PROBLEM.format(doc="A 2-group conv then amax over the channels: no row tail.", kernel=3,
                                   groups=2))
    _, plan, group = _conv_group(path)
    assert [g.family for g in plan.groups] == ["conv", "reduction"] and not group.reduce_axes


def test_a_1x1_convolution_with_a_tail_takes_the_implicit_gemm_form(tmp_path):
    path = tmp_path / "pointwise_amax.py"
    path.write_text(PROBLEM.format(doc="A 1 x 1 conv then amax over the channels.", kernel=1, groups=1))
    gen, plan, group = _conv_group(path)
    assert [g.family for g in plan.groups] == ["conv"] and group.reduce_axes == (1,)
    assert not default_schedule(gen, group).pointwise and "pointwise" not in work_sizes(gen, group)
    with pytest.raises(CodegenUnsupported, match="implicit GEMM form only"):
        make_module(path, {"conv": {"pointwise": True}})


def test_a_tail_codegen_refuses_is_planned_without_it_not_as_a_library_call():
    """The generate stage's fallback (pipeline._plan_around_refusals): a writer refusing a group's row tail gets the
    plan again without that tail (the reduction its own kernel), the convolution still generated."""
    from types import SimpleNamespace

    from kerntailor.codegen import GroupUnsupported
    from kerntailor.generate import pipeline

    _, _, gen, plan = prepared(MIN_TANH)

    def module(schedules):
        for g in run.plan.groups:
            if g.reduce_axes and g.family == "conv":
                raise GroupUnsupported(g.name, "no row tail here")

    run = SimpleNamespace(gen=gen, plan=plan, settings=SimpleNamespace(library_families=(), precision="ieee"),
                          module=module, library_anchors={})
    pipeline._plan_around_refusals(run)
    assert [g.family for g in run.plan.groups] == ["conv", "reduction"] and run.library_groups == {}


# --- interpreter ---------------------------------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "dtype", "block_n"), [
    (MIN_TANH, None, 16), (MIN_TANH, "bf16", 32), (LOGSUMEXP, None, 16), (LOGSUMEXP, None, 32), (MEAN, None, 16),
    (MEAN, None, 32), (SOFTMAX, None, 32)], ids=["min_2tiles", "min_1tile_bf16", "logsumexp_2tiles",
                                                 "logsumexp_1tile", "mean_2tiles", "mean_1tile", "softmax_1tile"])
def test_the_fused_kernel_passes_the_referee(path, dtype, block_n, tmp_path):
    # 24 or 20 output channels: BLOCK_N 16 splits them over two tiles (partials, combined by the row block's last
    # tile), 32 takes them in one (the tile's reductions are the rows': no partials, no counter)
    module = make_module(path, {"conv": {"BLOCK_M": 16, "BLOCK_N": block_n, "BLOCK_K": 16, "num_warps": 1}}, dtype)
    (kernel,) = module.kernels
    split = block_n < 24
    assert ("row_arrived = tl.atomic_add(row_counters_ptr + pid_m, 1" in kernel.source) == split
    assert ("k0_row_partials = torch.empty(" in module.source) == split
    assert "conv0 = torch.empty(" not in module.source   # the conv's output is never allocated
    verdict = judge(path, module, tmp_path, dtype)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{kernel.source}"


@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "block_n", "host"), [
    (AMIN_VARYING, 16, "ROW_ONE_TILE=int(d2 <= 16)"),
    (SOFTMAX_VARYING, 32, 'if d2 > 32:\n        raise ValueError(f"k0_conv_kernel reduces rows of {d2} columns')],
    ids=["amin_per_call", "softmax_checked"])
def test_channels_that_vary_per_call(path, block_n, host, tmp_path):
    # 24, 12 and 20 channels in the variants: at BLOCK_N 16 the amin takes one tile at 12 and partials at 20 and 24
    module = make_module(path, {"conv": {"BLOCK_M": 16, "BLOCK_N": block_n, "BLOCK_K": 16, "num_warps": 1}})
    assert host in module.source
    verdict = judge(path, module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{module.kernels[0].source}"


# --- compile -------------------------------------------------------------------------------------------------

@pytest.mark.compile
def test_the_fused_kernel_cross_compiles_for_sm_90(tmp_path):
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source

    module = make_module(LOGSUMEXP, None, "bf16", arch="sm_90")
    (kernel,) = module.kernels
    with BuildPool(None, timeout_s=300) as pool:
        (r,) = pool.build([kernel_source(module.source, kernel, prepared(LOGSUMEXP, "bf16")[2])],
                          [get_target("h200")], cache=BuildCache(tmp_path))
    assert r.ok, r.error
    assert r.facts.matrix_instr_count > 0
