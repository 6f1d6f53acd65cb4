"""A concatenation's sizes along its axis as derived dims (capture/generalize.py `concat_dims`, codegen/concat.py):
the sums of its operands' sizes, computed on the host, so that a KV-cache append (past_len + 1) and whatever reads
it generate. Unit tests on hand-built nodes and on the fixtures' captures (disk-cached), interpreter tests of the
generated modules (tiny sizes), a cross-compile for sm_90."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from helpers import make_module, prepared, verify
from kerntailor.capture.generalize import Dim, SizeExpr, concat_dims
from kerntailor.codegen import host_names
from kerntailor.codegen.concat import host_size_lines
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.expr import Const
from kerntailor.ir.nodes import Pointwise
from kerntailor.ir.types import TensorType

DATA = Path(__file__).parent / "data" / "concat"
KV = DATA / "kv_append.py"          # cat([past (B, h, L, d), new (B, h, 1, d)], 2), repeat_kv, * 2: both outputs
THREE = DATA / "three_way.py"       # cat([x * 2, y, z + 1], 1) of sizes a, b, c, then pointwise


def _cat(sizes: tuple[int, ...], axis: int = 1) -> Pointwise:
    shape = [2, 3, 4]
    shape[axis] = sum(sizes)
    return Pointwise("cat0", (), TensorType(tuple(shape), "fp32"), "cat", Const(0.0, "fp32"), axis, sizes)


def _dim(gen, node: str, end: int = 0) -> Dim:
    return next(d for d in gen.dims if d.node == node and d.end == end)


def _mono(dim: Dim, coeff: int = 1) -> SizeExpr:
    return SizeExpr(Fraction(coeff), ((dim, Fraction(1)),))


def test_concat_dims_are_the_output_size_and_the_inner_boundaries_per_variant():
    dims = concat_dims([_cat((5, 2, 7)), _cat((3, 4, 1)), _cat((2, 3, 5))])
    assert dims == {Dim(-1, 1, "cat0", 2): (7, 7, 5), Dim(-1, 1, "cat0"): (14, 8, 10)}
    # two operands: no inner boundary but the first operand's own size; another node: none
    assert concat_dims([_cat((4, 1), 2), _cat((9, 1), 2)]) == {Dim(-1, 2, "cat0"): (5, 10)}
    assert concat_dims([Pointwise("pw0", (), TensorType((2,), "fp32"), "neg", Const(0.0, "fp32"))]) == {}


def test_kv_append_sizes_are_monomials_in_the_derived_length():
    _, _, gen, _ = prepared(KV)
    total = _dim(gen, "cat0")
    assert total == Dim(-1, 2, "cat0")
    exprs = dict(gen.exprs)
    # the cat's own size and its second operand's bounds, the new cache's strides as repeat_kv reads it, and the
    # scaled output's size along the sequence axis: all in the derived length, none an input dim plus one
    assert exprs[("node", "cat0", "out", 2)] == _mono(total)
    copy = next(n for n in gen.graph.nodes if n.origin != "cat" and n.operands and n.operands[0].base == "cat0")
    stride = exprs[("node", copy.name, "operand", 0, "strides", 1)]
    assert (total, Fraction(1)) in stride.factors and not stride.offset
    assert all(not e.offset for p, e in gen.exprs if p[-2:] == ("out", 2) or "strides" in p)


def test_kv_append_length_is_computed_on_the_host_as_the_sum():
    _, _, gen, _ = prepared(KV)
    names = host_names(gen)
    total = _dim(gen, "cat0")
    node = gen.graph.node("cat0")
    lines = host_size_lines(gen, node, total, names[total], SizeArgs(gen, names))
    past = next(d for d in gen.dims if d.input == 0 and d.axis == 2)
    assert lines == [f"{names[total]} = {names[past]} + 1"]


def test_three_way_boundaries_and_total_evaluate_to_the_sums_at_unseen_sizes():
    _, _, gen, _ = prepared(THREE)
    names = host_names(gen)
    inner, total = _dim(gen, "cat0", 2), _dim(gen, "cat0")
    node = gen.graph.node("cat0")
    lines = [line for dim in (inner, total)
             for line in host_size_lines(gen, node, dim, names[dim], SizeArgs(gen, names))]
    # sizes no variant had: the lines read the input dims' host names
    sizes = {Dim(0, 1): 11, Dim(1, 1): 13, Dim(2, 1): 17}
    scope = {names[d]: sizes[d] for d in gen.dims if d in sizes}
    exec("\n".join(lines), {}, scope)  # noqa: S102
    assert scope[names[inner]] == 24 and scope[names[total]] == 41
    exprs = dict(gen.exprs)
    # the third operand's view starts (a + b) rows before it: a monomial in the inner boundary
    offset = exprs[("node", "cat0", "operand", 2, "offset")]
    assert offset.factors and (inner, Fraction(1)) in offset.factors and offset.coeff < 0


def test_generated_module_computes_the_sum_before_it_allocates():
    source = make_module(KV, arch="sm_90").source
    body = source[source.index("def forward(self, past, new)"):]
    assert "+ 1\n" in body and ".shape[2] + 1" not in body   # the sum from the size names, once


@pytest.mark.interpreter
@pytest.mark.parametrize("path", [KV, THREE], ids=lambda p: p.stem)
def test_concat_groups_pass_the_referee(path, tmp_path):
    verify(path, make_module(path, arch="sm_90"), tmp_path)


@pytest.mark.compile
def test_kv_append_cross_compiles_for_sm_90(tmp_path):
    from kerntailor.builder import cross_compile
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    _, _, gen, plan = prepared(KV, "bf16")
    module = make_module(KV, dtype="bf16", arch="sm_90")
    # the cat's kernel (the others are plain pointwise copies): its bounds and strides are size arguments
    kernel = next(k for g, k in zip(plan.launch_order(), module.kernels) if "cat0" in g.nodes)
    result = cross_compile(kernel_source(module.source, kernel, gen), get_target("h200"), cache_dir=tmp_path)
    assert result.ok, result.error
