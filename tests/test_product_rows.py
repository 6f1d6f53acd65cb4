"""A linear layer on (B, T, D) is a 2-d product whose readers see it reshaped to 3-d (capture/product_rows.py): its
epilogue (SwiGLU's gate, a residual add, a GELU) is planned at the product's (B*T, N) shape and joins the product's
kernel, and a residual's square before an RMSNorm stays with the norm's reduction (plan/fusion.py
_reduction_prologue) instead of being written beside the residual."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import judge, make_module, prepared
from kerntailor.capture.product_rows import _merged, _renumbered, _whole_reshape
from kerntailor.ir.expr import Const, Index, Load, Op
from kerntailor.ir.nodes import Matmul, Pointwise, Reduction
from kerntailor.ir.types import View

DATA = Path(__file__).parent / "data" / "productrows"
SWIGLU = DATA / "swiglu_block.py"
POSITION = DATA / "position_bias.py"


def _groups(path: Path) -> tuple[dict, list[list[str]]]:
    _, _, gen, plan = prepared(path)
    return {n.name: n for n in gen.graph.nodes}, [list(g.nodes) for g in plan.groups]


def _group_of(groups: list[list[str]], name: str) -> list[str]:
    return next(g for g in groups if name in g)


@pytest.mark.unit
def test_views_merge_their_leading_axes_only_where_strides_allow():
    assert _merged(View("a", (3, 40, 48), (1920, 48, 1)), 120) == View("a", (120, 48), (48, 1))
    assert _merged(View("b", (3, 40, 48), (0, 0, 1)), 120) == View("b", (120, 48), (0, 1))         # a bias
    assert _merged(View("c", (3, 1, 40, 48), (1920, 7, 48, 1), 5), 120) == View("c", (120, 48), (48, 1), 5)
    assert _merged(View("d", (2, 48, 64), (48, 1, 0)), 96) == View("d", (96, 64), (1, 0))          # a row value
    assert _merged(View("e", (3, 40, 48), (0, 48, 1)), 120) is None        # a per-position bias of (T, N)
    assert _merged(View("f", (3, 40, 48), (48, 144, 1)), 120) is None      # (T, B) transposed


@pytest.mark.unit
def test_a_decode_steps_size_one_axis_is_a_whole_reshape_whatever_its_stride():
    """Decoding one token: the product (B, N) read as (B, 1, N); export gives the size-1 axis any stride."""
    assert _whole_reshape(View("mm", (32, 1, 8), (8, 1, 1)), (32, 1, 8), {"mm"})
    assert _whole_reshape(View("mm", (32, 1, 8), (8, 8, 1)), (32, 1, 8), {"mm"})
    assert not _whole_reshape(View("mm", (32, 1, 8), (8, 8, 1), 4), (32, 1, 8), {"mm"})
    assert not _whole_reshape(View("mm", (32, 1, 8), (8, 8, 1)), (32, 1, 8), {"other"})


@pytest.mark.unit
def test_only_the_last_axis_index_survives_the_flattening():
    last = Op("add", (Load(0, "fp32"), Index(2, "fp32")), "fp32")
    assert _renumbered(last, 3) == Op("add", (Load(0, "fp32"), Index(1, "fp32")), "fp32")
    assert _renumbered(Op("add", (Load(0, "fp32"), Index(1, "fp32")), "fp32"), 3) is None   # the T axis
    assert _renumbered(Load(0, "fp32", valid=Const(True, "bool")), 3) is None


@pytest.mark.unit
def test_swiglu_block_epilogues_join_their_products():
    nodes, groups = _groups(SWIGLU)
    products = [n for n in nodes.values() if isinstance(n, Matmul)]
    assert len(products) == 4
    # every full-size value is planned at the products' (B*T, N) shape
    full = [n for n in nodes.values() if isinstance(n, Pointwise) and n.out.numel >= 2 * 48 * 64]
    assert full and all(len(n.out.shape) == 2 for n in full)
    assert len(groups) == 4
    o_proj, gate, up, down = products
    # the residual add joins the output projection; its square is the norm's prologue, not a stored member
    residual = _group_of(groups, o_proj.name)
    assert len(residual) == 2 and isinstance(nodes[residual[1]], Pointwise)
    norm = _group_of(groups, next(n.name for n in nodes.values() if isinstance(n, Reduction)))
    assert nodes[norm[0]].family == "pointwise" and "pow" in nodes[norm[0]].describe()
    # silu(gate) * up joins the gate product, and the up product joins it as its second product (plan/dual.py); the
    # last residual add joins the down product
    assert len(_group_of(groups, gate.name)) == 5 and up.name in _group_of(groups, gate.name)
    assert len(_group_of(groups, down.name)) == 2


@pytest.mark.unit
def test_a_view_that_does_not_merge_keeps_its_node_apart():
    nodes, groups = _groups(POSITION)
    bias = [n for n in nodes.values() if any(op.base == "p_pos" for op in n.operands)]
    assert len(bias) == 1 and bias[0].out.shape == (3, 40, 48) and _group_of(groups, bias[0].name) == [bias[0].name]
    fc = [n for n in nodes.values() if isinstance(n, Matmul)][1]
    assert len(_group_of(groups, fc.name)) == 8      # the product, its bias, the residual add and GELU's five nodes
    assert len(groups) == 3


@pytest.mark.interpreter
@pytest.mark.parametrize("path", [SWIGLU, POSITION], ids=lambda p: p.stem)
def test_the_flattened_epilogues_pass_the_referee(path, tmp_path):
    verdict = judge(path, make_module(path), tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"


@pytest.mark.interpreter
def test_the_flattened_epilogues_pass_the_referee_in_bf16(tmp_path):
    verdict = judge(SWIGLU, make_module(SWIGLU, dtype="bf16"), tmp_path, dtype="bf16")
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"


@pytest.mark.unit
def test_every_variant_flattens_the_same_nodes():
    """Over a batch of 1 the per-position bias's view (0, N, 1) merges (a size-1 axis merges with anything), over a
    batch of 3 it does not: alone, the variants' graphs would differ in structure (generalize's StructureChanged, as
    an MQA problem with a batch-1 variant raised); common_rows keeps only what every variant flattens."""
    from kerntailor.capture.capture import capture_problem
    from kerntailor.capture.product_rows import common_rows, flatten_product_rows, flattened_rows
    from kerntailor.problem import load_problem
    from kerntailor.problem.spec import Variant

    problem = load_problem(POSITION)
    wide, one = (capture_problem(problem, v).unflattened for v in ("default", Variant("one", (("batch", 1),))))
    alone = [flattened_rows(g, flatten_product_rows(g)) for g in (wide, one)]
    bias = next(n.name for n in wide.nodes if any(op.base == "p_pos" for op in n.operands))
    assert bias in alone[1] and bias not in alone[0]
    together = [flattened_rows(g, f) for g, f in zip((wide, one), common_rows([wide, one]))]
    assert together[0] == together[1] == alone[0] and together[0]
