"""Shape generalization (capture/generalize.py): SizeExpr evaluation and rendering, fitting the slots that
vary between variants over input dims, and the errors when a graph cannot be generalized.

Unit tests on hand-built graphs (milliseconds) plus capture_generalized on a few suite problems (about
a second each: every variant is traced on meta tensors).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from pathlib import Path

import pytest

from helpers import GQA_SIZES, strided_graph
from kerntailor.capture.capture import capture_generalized
from kerntailor.capture.generalize import Dim, SizeExpr, StructureChanged, generalize, graph_slots
from kerntailor.errors import CaptureError
from kerntailor.ir.expr import Const, Load, Op
from kerntailor.ir.nodes import Graph, GraphInput, Matmul, Pointwise, Reduction
from kerntailor.ir.types import TensorType, View
from kerntailor.problem import load_problem

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ROOT / "problems"
DATA = Path(__file__).parent / "data" / "codegen_fused"

X0, X1 = Dim(0, 0), Dim(0, 1)
NAMES = {X0: "d0", X1: "d1"}


# --- SizeExpr ---------------------------------------------------------------------------------------------

def _eval_render(e: SizeExpr, sizes: dict[Dim, int]):
    """Evaluate the rendered host expression in Python with the given sizes."""
    return eval(e.render(NAMES), {}, {NAMES[d]: v for d, v in sizes.items()})  # noqa: S307


def test_constant_expr_evaluates_and_renders_as_its_literal():
    e = SizeExpr(Fraction(7))
    assert e.is_constant
    assert e.evaluate({}) == 7 and isinstance(e.evaluate({}), int)
    assert e.render({}) == "7"
    assert SizeExpr(Fraction(1, 4)).render({}) == "0.25"
    assert SizeExpr(0.125).evaluate({}) == 0.125


def test_plain_dim():
    e = SizeExpr(Fraction(1), ((X1, Fraction(1)),))
    assert not e.is_constant
    assert e.render(NAMES) == "d1"
    assert e.evaluate({X1: 4096}) == 4096


@pytest.mark.parametrize("expr, sizes, value, text", [
    # an integer coefficient below one: exact floor division, an int, never a float
    (SizeExpr(Fraction(1, 2), ((X1, Fraction(1)),)), {X1: 128}, 64, "d1 // 2"),
    (SizeExpr(Fraction(3, 2), ((X0, Fraction(1)), (X1, Fraction(1)))), {X0: 6, X1: 10}, 90, "(3 * d0 * d1) // (2)"),
    (SizeExpr(Fraction(1), ((X0, Fraction(1)), (X1, Fraction(-1)))), {X0: 4096, X1: 64}, 64, "d0 // d1"),
    (SizeExpr(Fraction(2), ((X0, Fraction(2)),)), {X0: 12}, 288, "2 * d0 ** 2"),
    (SizeExpr(Fraction(-1, 2), ((X1, Fraction(1)),)), {X1: 128}, -64, "(-1 * d1) // (2)"),
    # offsets (var's N - 1)
    (SizeExpr(Fraction(1), ((X1, Fraction(1)),), Fraction(-1)), {X1: 255}, 254, "d1 - 1"),
    (SizeExpr(Fraction(1, 2), ((X1, Fraction(1)),), Fraction(2)), {X1: 10}, 7, "d1 // 2 + 2"),
])
def test_integer_exprs_are_exact(expr, sizes, value, text):
    got = expr.evaluate(sizes)
    assert got == value and isinstance(got, int)
    assert expr.render(NAMES) == text
    rendered = _eval_render(expr, sizes)
    assert rendered == value and isinstance(rendered, int)


def test_float_coefficient():
    e = SizeExpr(0.5, ((X1, Fraction(1)),))
    assert e.evaluate({X1: 64}) == 32.0
    assert e.render(NAMES) == "0.5 * d1"
    assert _eval_render(e, {X1: 64}) == 32.0
    # a float coefficient with a divisor renders true division
    e = SizeExpr(2.0, ((X0, Fraction(1)), (X1, Fraction(-1))))
    assert e.render(NAMES) == "(2.0 * d0) / (d1)"
    assert _eval_render(e, {X0: 3, X1: 4}) == pytest.approx(1.5)
    assert e.evaluate({X0: 3, X1: 4}) == pytest.approx(1.5)


def test_float_offset_and_mean_divisor():
    # the N of a mean as a float: 1.0 * N
    e = SizeExpr(1.0, ((X1, Fraction(1)),))
    assert e.evaluate({X1: 4096}) == 4096.0
    assert e.render(NAMES) == "d1"


def test_sqrt_exponent():
    # attention's 1/sqrt(d)
    e = SizeExpr(1.0, ((X1, Fraction(-1, 2)),))
    assert e.evaluate({X1: 64}) == pytest.approx(0.125)
    assert isinstance(e.evaluate({X1: 64}), float)
    assert e.render(NAMES) == "d1 ** -0.5"
    assert _eval_render(e, {X1: 64}) == pytest.approx(0.125)
    # with a Fraction coefficient the root forces true (float) arithmetic, never //
    e = SizeExpr(Fraction(1, 2), ((X1, Fraction(1, 2)),))
    assert "//" not in e.render(NAMES)
    assert e.evaluate({X1: 256}) == pytest.approx(8.0)
    assert _eval_render(e, {X1: 256}) == pytest.approx(8.0)


# --- generalize() on hand-built graphs ---------------------------------------------------------------------

def mean_graph(b: int, n: int, op: str = "div", extra: bool = False) -> Graph:
    """x (b, n) -> sum over axis 1 -> divided by n (a mean), optionally followed by an extra node."""
    x = GraphInput("x", TensorType((b, n), "fp32"), "input", "0")
    s = Reduction("sum0", (View.of("x", (b, n)),), TensorType((b,), "fp32"), "mean", op="sum", axes=(1,))
    pw = Pointwise("pw0", (View("sum0", (b, 1), (1, 1), 0),), TensorType((b, 1), "fp32"), "mean",
                   expr=Op(op, (Load(0, "fp32"), Const(float(n), "fp32")), "fp32"))
    nodes = [s, pw]
    out = "pw0"
    if extra:
        nodes.append(Pointwise("pw1", (View.of("pw0", (b, 1)),), TensorType((b, 1), "fp32"), "exp",
                               expr=Op("exp", (Load(0, "fp32"),), "fp32")))
        out = "pw1"
    return Graph((x,), tuple(nodes), (View.of(out, (b, 1)),), (TensorType((b, 1), "fp32"),))


SIZES = [(4096, 1024), (8, 256), (3, 255)]   # default, small, odd


def exprs_of(gen) -> dict:
    return dict(gen.exprs)


def test_sizes_fitted_to_input_dims_and_mean_divisor():
    gen = generalize([mean_graph(b, n) for b, n in SIZES], "mean")
    e = exprs_of(gen)
    # the reduced size is x.shape[1], the row count x.shape[0]
    assert e[("node", "sum0", "operand", 0, "shape", 1)] == SizeExpr(Fraction(1), ((X1, Fraction(1)),))
    assert e[("node", "sum0", "operand", 0, "shape", 0)] == SizeExpr(Fraction(1), ((X0, Fraction(1)),))
    assert e[("node", "sum0", "operand", 0, "strides", 0)].factors == ((X1, Fraction(1)),)
    # the mean's divisor N (a float constant in the expression: Op=0, Load=1, Const=2) is x.shape[1]
    divisor = e[("node", "pw0", "const", 2)]
    assert divisor.factors == ((X1, Fraction(1)),)
    assert divisor.evaluate({X0: 5, X1: 777}) == pytest.approx(777.0)
    assert divisor.render(NAMES) == "d1"
    assert set(gen.dims) == {X0, X1}
    # slots the same in every variant get no expression: a constant default
    assert ("node", "sum0", "operand", 0, "strides", 1) not in e
    assert gen.expr(("node", "sum0", "operand", 0, "strides", 1), 1).is_constant
    # every fitted expression reproduces the value it was fitted to, in every variant
    graphs = [mean_graph(b, n) for b, n in SIZES]
    for (b, n), g in zip(SIZES, graphs):
        values = dict(graph_slots(g))
        for path, expr in gen.exprs:
            assert expr.evaluate({X0: b, X1: n}) == pytest.approx(values[path]), path


def test_only_the_varying_dim_is_used():
    gen = generalize([mean_graph(16, n) for n in (1024, 256, 255)], "rows-fixed")
    assert gen.dims == (X1,)
    assert ("node", "sum0", "out", 0) not in exprs_of(gen)


def test_offset_is_fitted():
    graphs = []
    for b, n in SIZES:  # an unbiased variance: divided by N - 1
        g = mean_graph(b, n)
        pw = g.nodes[1]
        pw = Pointwise(pw.name, pw.operands, pw.out, pw.origin,
                       expr=Op("div", (Load(0, "fp32"), Const(float(n - 1), "fp32")), "fp32"))
        graphs.append(Graph(g.inputs, (g.nodes[0], pw), g.outputs, g.output_types))
    e = exprs_of(generalize(graphs, "var"))[("node", "pw0", "const", 2)]
    assert e.factors == ((X1, Fraction(1)),) and e.offset == -1
    assert e.render(NAMES) == "d1 - 1"


def linear_graph(b: int, k: int, n: int) -> Graph:
    """x (b, k) @ w.T where w is an (n, k) parameter: the matmul reads w through a transposing view."""
    x = GraphInput("x", TensorType((b, k), "fp32"), "input", "0")
    w = GraphInput("w", TensorType((n, k), "fp32"), "parameter", "weight")
    mm = Matmul("mm0", (View.of("x", (b, k)), View("w", (k, n), (1, k), 0)), TensorType((b, n), "fp32"), "mm",
                m=b, n=n, k=k)
    return Graph((x, w), (mm,), (View.of("mm0", (b, n)),), (TensorType((b, n), "fp32"),))


def test_stride_of_a_transposed_weight_and_equal_dims():
    gen = generalize([linear_graph(*s) for s in [(64, 128, 32), (8, 32, 16), (5, 33, 17)]], "linear")
    e = exprs_of(gen)
    stride = e[("node", "mm0", "operand", 1, "strides", 1)]
    # the weight's column stride is K: fitted to x.shape[1] (user inputs come first), equal to w.shape[1]
    assert stride == SizeExpr(Fraction(1), ((Dim(0, 1), Fraction(1)),))
    assert e[("node", "mm0", "k")] == stride
    assert e[("node", "mm0", "n")].factors == ((Dim(1, 0), Fraction(1)),)
    # x.shape[1] and w.shape[1] were equal in every variant: reported, to be asserted at run time
    assert (Dim(0, 1), Dim(1, 1)) in gen.equal_dims
    assert all(a != b for a, b in gen.equal_dims)
    assert not any({a, b} == {Dim(0, 0), Dim(1, 0)} for a, b in gen.equal_dims)


def test_stride_of_a_size_one_axis_does_not_constrain():
    # a transposed (n, 1) weight in one variant: its stride along the size-1 axis is arbitrary
    graphs = [linear_graph(*s) for s in [(64, 128, 32), (8, 32, 16), (5, 33, 1)]]
    gen = generalize(graphs, "linear")
    assert exprs_of(gen)[("node", "mm0", "operand", 1, "strides", 1)].factors == ((Dim(0, 1), Fraction(1)),)


KV, N = Dim(0, 1), Dim(0, 2)


def test_a_stride_fitted_where_a_dim_did_not_vary_is_fitted_over_every_variant():
    """The batch stride kv * n, constrained only where b != 1 (kv was 2 there): `2 * n` fitted as well, and read
    with the wrong stride at kv = 1. Over every variant (the size-1 axes' strides are the contiguous ones) only
    kv * n fits, and nothing is left to check."""
    gen = generalize([strided_graph(b, kv, n, kv * n) for b, kv, n in GQA_SIZES], "gqa")
    stride = exprs_of(gen)[("node", "pw0", "operand", 0, "strides", 0)]
    assert stride.evaluate({Dim(0, 0): 2, KV: 1, N: 40}) == 40
    assert stride == SizeExpr(Fraction(1), ((KV, Fraction(1)), (N, Fraction(1))))
    assert gen.pins == ()


def test_a_stride_no_expression_fits_everywhere_records_what_its_variants_kept_equal():
    """The size-1 axis's stride arbitrary (7) where b == 1: fitted over the other two variants, where b and kv
    were both 2: both are pinned (kv * n is `2 * n` there), unless the axis has size 1 again."""
    graphs = [strided_graph(b, kv, n, kv * n if b != 1 else 7) for b, kv, n in GQA_SIZES]
    gen = generalize(graphs, "gqa")
    assert exprs_of(gen)[("node", "pw0", "operand", 0, "strides", 0)].evaluate({N: 40}) == 80
    pins = {(p.factors, p.value) for p in gen.pins}
    assert pins == {(((Dim(0, 0), 1),), 2), (((KV, 1),), 2)}
    assert {p.unless for p in gen.pins} == {SizeExpr(Fraction(1), ((Dim(0, 0), Fraction(1)),))}
    assert set(gen.dims) >= {Dim(0, 0), KV, N}   # the host reads every dim a pin names


def test_pins_are_every_product_the_fitted_variants_kept_equal():
    """n == 2 * b in the two variants the stride was fitted over, and kv constant there: both are relations."""
    from kerntailor.capture.generalize import _dim_values, _relations

    dims = [Dim(0, 0), KV, N]
    graphs = [strided_graph(b, kv, n, 1) for b, kv, n in [(4, 2, 8), (1, 3, 5), (3, 2, 6)]]
    rel = {frozenset(r) for r in _relations([True, False, True], dims, _dim_values(graphs))}
    assert rel == {frozenset({(KV, 1)}), frozenset({(Dim(0, 0), -1), (N, 1)})}
    assert _relations([True, True, True], dims, _dim_values(graphs)) == []   # the third variant varies them apart


def chain_graph(b: int, n: int, depth: int) -> Graph:
    """x (b, n) -> `depth` exps in a row: a deep model's many nodes whose sizes repeat."""
    x = GraphInput("x", TensorType((b, n), "fp32"), "input", "0")
    nodes, prev = [], "x"
    for i in range(depth):
        nodes.append(Pointwise(f"pw{i}", (View.of(prev, (b, n)),), TensorType((b, n), "fp32"), "exp",
                               expr=Op("exp", (Load(0, "fp32"),), "fp32")))
        prev = f"pw{i}"
    return Graph((x,), tuple(nodes), (View.of(prev, (b, n)),), (TensorType((b, n), "fp32"),))


@pytest.mark.parametrize("depth", [2, 60])
def test_fitting_work_does_not_grow_with_depth(monkeypatch, depth):
    """The dims' values are read once per generalize and each distinct slot value vector is fitted once: before,
    every varying slot re-read the dims from every node and searched again (ResNet-101: 8816 searches over 1490
    nodes, 60 s; 34 distinct ones)."""
    from kerntailor.capture import generalize as module

    counts = {"_dim_values": 0, "_fit": 0}

    def counting(name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)
        return wrapper

    for name in counts:
        monkeypatch.setattr(module, name, counting(name))
    gen = generalize([chain_graph(b, n, depth) for b, n in SIZES], "chain")
    assert len(gen.exprs) == 5 * depth + 5   # per node: out, operand shape (2 each), row stride; input; output
    assert counts == {"_dim_values": 1, "_fit": 2}   # b, and n (the row stride too): whatever the depth
    assert gen.expr(("node", f"pw{depth - 1}", "out", 0), 0) == SizeExpr(Fraction(1), ((X0, Fraction(1)),))


def test_structure_change_raises():
    graphs = [mean_graph(4096, 1024), mean_graph(8, 256, extra=True), mean_graph(3, 255)]
    with pytest.raises(StructureChanged, match="structure changes between variants"):
        generalize(graphs, "grows")
    assert issubclass(StructureChanged, CaptureError)


def test_op_change_raises_naming_the_slot():
    graphs = [mean_graph(4096, 1024), mean_graph(8, 256, op="mul"), mean_graph(3, 255)]
    with pytest.raises(CaptureError, match=r"node/pw0/op/0 changes between variants"):
        generalize(graphs, "flips")


def test_unfittable_value_raises_naming_the_slot():
    graphs = []
    for (b, n), c in zip(SIZES, (5.0, 97.0, 1234.0)):  # no coeff * dims^e + small offset gives these
        g = mean_graph(b, n)
        pw = g.nodes[1]
        pw = Pointwise(pw.name, pw.operands, pw.out, pw.origin,
                       expr=Op("div", (Load(0, "fp32"), Const(c, "fp32")), "fp32"))
        graphs.append(Graph(g.inputs, (g.nodes[0], pw), g.outputs, g.output_types))
    with pytest.raises(CaptureError, match=r"cannot express node/pw0/const/2 = \[5.0, 97.0, 1234.0\]") as info:
        generalize(graphs, "weird")
    assert "weird" in str(info.value)


def test_equal_dims_reports_tied_inputs_only():
    def graph(b, n):
        x = GraphInput("x", TensorType((b, n), "fp32"), "input", "0")
        y = GraphInput("y", TensorType((b, n), "fp32"), "input", "1")
        pw = Pointwise("pw0", (View.of("x", (b, n)), View.of("y", (b, n))), TensorType((b, n), "fp32"), "add",
                       expr=Op("add", (Load(0, "fp32"), Load(1, "fp32")), "fp32"))
        return Graph((x, y), (pw,), (View.of("pw0", (b, n)),), (TensorType((b, n), "fp32"),))

    gen = generalize([graph(b, n) for b, n in [(32, 64), (4, 16), (3, 17)]], "add")
    assert set(gen.equal_dims) == {(Dim(0, 0), Dim(1, 0)), (Dim(0, 1), Dim(1, 1))}
    # the fitted sizes use the first input's dims
    assert set(gen.dims) == {Dim(0, 0), Dim(0, 1)}
    # a dim that never varies is neither fitted nor reported
    gen = generalize([graph(32, n) for n in (64, 16, 17)], "add")
    assert gen.equal_dims == ((Dim(0, 1), Dim(1, 1)),)
    assert gen.dims == (Dim(0, 1),)


# --- capture_generalized on suite problems ----------------------------------------------------------------

@functools.cache
def generalized(path: Path):
    spec = load_problem(path)
    return spec, *capture_generalized(spec)


def _check_reproduces_every_variant(spec, gen):
    """Every fitted expression gives the captured value in every declared variant."""
    from kerntailor.capture.capture import capture_problem

    for variant in spec.variants:
        g = capture_problem(spec, variant).graph
        sizes = {}
        for d in gen.dims:
            sizes[d] = g.inputs[d.input].type.shape[d.axis]
        values = dict(graph_slots(g))
        for path, expr in gen.exprs:
            got, want = expr.evaluate(sizes), values[path]
            assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9), (variant.name, path, got, want)


@pytest.mark.capture
def test_layernorm():
    spec, cap, gen = generalized(PROBLEMS / "level1" / "layernorm.py")
    names = [i.name for i in gen.graph.inputs]
    x = Dim(names.index("x"), 1)
    e = exprs_of(gen)
    # the mean's and the variance's N is the hidden size (x.shape[1]), not the traced 4096
    for node in ("pw0", "pw3"):
        assert e[("node", node, "const", 2)].factors == ((x, Fraction(1)),)
    # LayerNorm's weight and bias lengths equal x.shape[1] in every variant: asserted at run time
    w = names.index("p_ln_weight")
    assert any(x in pair and Dim(w, 0) in pair for pair in gen.equal_dims)
    assert cap.variant == "default" and gen.graph is cap.graph
    _check_reproduces_every_variant(spec, gen)


@pytest.mark.capture
def test_rmsnorm():
    spec, _, gen = generalized(PROBLEMS / "level1" / "rmsnorm.py")
    names = [i.name for i in gen.graph.inputs]
    x1 = Dim(names.index("x"), 1)
    assert exprs_of(gen)[("node", "pw1", "const", 2)].factors == ((x1, Fraction(1)),)
    _check_reproduces_every_variant(spec, gen)


@pytest.mark.capture
def test_cross_entropy():
    spec, _, gen = generalized(PROBLEMS / "level1" / "cross_entropy.py")
    names = [i.name for i in gen.graph.inputs]
    logits = names.index("logits")
    e = exprs_of(gen)
    # the gathered row's stride is the vocabulary size
    assert e[("node", "gather0", "operand", 0, "strides", 0)].factors == ((Dim(logits, 1), Fraction(1)),)
    assert (Dim(logits, 0), Dim(names.index("targets"), 0)) in gen.equal_dims
    _check_reproduces_every_variant(spec, gen)


@pytest.mark.capture
def test_rotary_embedding():
    spec, _, gen = generalized(PROBLEMS / "level3" / "rotary_embedding.py")
    e = exprs_of(gen)
    names = [i.name for i in gen.graph.inputs]
    d = Dim(names.index("x"), 3)
    # rotate_half: the halves are head_dim // 2, an exact integer division, and their offsets +-head_dim/2
    half = e[("node", "pw0", "out", 3)]
    assert half == SizeExpr(Fraction(1, 2), ((d, Fraction(1)),))
    assert half.evaluate({d: 96}) == 48 and isinstance(half.evaluate({d: 96}), int)
    assert e[("node", "pw0", "operand", 0, "offset")] == half
    assert e[("node", "cat0", "operand", 1, "offset")].evaluate({d: 96}) == -48
    _check_reproduces_every_variant(spec, gen)


@pytest.mark.capture
def test_a_size_that_fits_nothing_is_a_capture_error(tmp_path):
    # a constant that varies with the variant but is no function of the input dims
    src = (DATA / "tiny_softmax.py").read_text().replace(
        "return torch.softmax(x, dim=1)", "return torch.softmax(x, dim=1) * SCALE")
    src = src.replace("dim = 256\n", "dim = 256\nSCALE = 3\n")
    src = src.replace('VARIANTS = {"small": {"batch_size": 4, "dim": 128}, "odd": {"batch_size": 3, "dim": 203}}',
                      'VARIANTS = {"small": {"batch_size": 4, "dim": 128, "SCALE": 37}, '
                      '"odd": {"batch_size": 3, "dim": 203, "SCALE": 1001}}')
    path = tmp_path / "scaled_softmax.py"
    path.write_text(src)
    with pytest.raises(CaptureError, match="cannot express .*const"):
        capture_generalized(load_problem(path))
