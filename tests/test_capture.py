"""Capture: every problem lowers to the IR; node families, FLOPs, bytes and floors against hand-computed
values; unsupported ops are one-line CaptureErrors that name the op.

Each problem is captured once per dtype (`captured`, cached), and the floor on every target is computed from
that one capture. Every test that captures is in the capture tier (`pytest -m capture`: about a second a
problem); test_plan.py plans the same problems from the tests' capture cache (helpers.prepared).
"""

from __future__ import annotations

import functools
import json
import math
import textwrap
from math import prod
from pathlib import Path

import pytest
import torch

from helpers import loaded
from kerntailor.capture import Capture, capture_problem
from kerntailor.capture.cost import MATRIX_FAMILIES
from kerntailor.errors import CaptureError, KerntailorError
from kerntailor.inspect import floor_of
from kerntailor.ir.expr import CAST, Const, Index, Load, Op
from kerntailor.ir.nodes import Attention, Conv, Graph, Matmul, Pointwise, Pool, Reduction, Scan
from kerntailor.problem import load_problem
from kerntailor.targets import all_targets, get_target

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ROOT / "problems"
# the kernel suite: problems/models/ holds whole models (profile/optimize; tests/test_hf_models.py)
FILES = sorted(p for p in PROBLEMS.glob("level*/**/*.py") if not p.name.startswith("_"))
IDS = [str(p.relative_to(PROBLEMS)) for p in FILES]
BY_NAME = {p.stem: p for p in FILES}

BF16_SUBSET = ["softmax_long_rows", "layernorm", "rmsnorm", "cross_entropy", "matmul_square",
               "matmul_transposed_b", "gemm_bias_relu", "conv2d", "sdpa", "swiglu_mlp", "llama_decoder_block"]


def spec_of(name: str, dtype: str | None = None):
    return loaded(BY_NAME[name], dtype)


@functools.cache
def captured(name: str, dtype: str | None = None) -> Capture:
    """The default variant of problem `name` captured once per dtype."""
    return capture_problem(spec_of(name, dtype))


def constants(name: str) -> dict:
    """The module-level size constants of a problem's default variant."""
    return vars(spec_of(name).module())


# --- helpers --------------------------------------------------------------------------------------------

def walk(expr):
    yield expr
    if isinstance(expr, Op):
        for a in expr.args:
            yield from walk(a)
    elif isinstance(expr, Load):
        if expr.gather is not None:
            yield from walk(expr.gather[1])
        if expr.valid is not None:
            yield from walk(expr.valid)


def only(graph: Graph, cls):
    nodes = [n for n in graph.nodes if isinstance(n, cls)]
    assert len(nodes) == 1, [f"{n.name}: {n.family}" for n in graph.nodes]
    return nodes[0]


def check_well_formed(graph: Graph) -> None:
    """Operands name known buffers defined earlier; Views stay in bounds of their buffers."""
    known = {i.name: i.type for i in graph.inputs}
    assert len(known) == len(graph.inputs)
    for node in graph.nodes:
        assert node.name not in known, f"{node.name} defined twice"
        for view in node.operands:
            assert view.base in known, f"{node.name} reads {view.base} before it is written"
            assert len(view.shape) == len(view.strides)
            size = known[view.base].numel
            if view.numel:
                lo = view.offset + sum((s - 1) * st for s, st in zip(view.shape, view.strides) if st < 0)
                hi = view.offset + sum((s - 1) * st for s, st in zip(view.shape, view.strides) if st > 0)
                # a gather adds an index to the address; a masked load (cat, padding) reads only where valid
                guarded = isinstance(node, Pointwise) and any(
                    isinstance(e, Load) and (e.gather is not None or e.valid is not None) for e in walk(node.expr))
                assert (0 <= lo and hi < size) or guarded, f"{node.name} reads {view} outside {size} elements"
        if isinstance(node, Pointwise):
            for e in walk(node.expr):
                if isinstance(e, Load):
                    assert 0 <= e.operand < len(node.operands), f"{node.name}: load of operand {e.operand}"
                    assert node.operands[e.operand].shape == node.out.shape
        known[node.name] = node.out
    for view, ttype in zip(graph.outputs, graph.output_types):
        assert view.base in known and view.shape == ttype.shape


# --- every problem captures -------------------------------------------------------------------------------

@pytest.mark.capture
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_every_problem_captures_fp32_with_a_floor_on_every_target(path):
    cap = captured(path.stem)
    graph = cap.graph
    assert graph.nodes and graph.outputs
    check_well_formed(graph)
    assert cap.cost.min_bytes > 0 and cap.cost.flops >= 0
    assert cap.cost.unfused_bytes >= cap.cost.min_bytes or any(
        i.type.numel > 1 and i.name not in {v.base for n in graph.nodes for v in n.operands} for i in graph.inputs)
    assert cap.cost.matrix == any(n.family in MATRIX_FAMILIES for n in graph.nodes)
    for target in all_targets():
        floor = floor_of(cap, target)
        assert math.isfinite(floor.microseconds) and floor.microseconds > 0, (target.name, floor)
        assert floor.bound in ("memory", "compute")
        assert floor.memory_seconds == pytest.approx(cap.cost.min_bytes / target.memory_bandwidth)


DERIVED_VARIANTS = json.loads((ROOT / "tests" / "data" / "derived_variants.json").read_text())["problems"]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_variants_are_unchanged(path):
    """Each problem's variants are what the loader gave at 963675c, before sizes were also taken from literals
    (tests/data/derived_variants.json): stored results are keyed on them."""
    spec = spec_of(path.stem)
    assert {v.name: dict(v.overrides) for v in spec.variants if not v.is_default} == \
        DERIVED_VARIANTS[str(path.relative_to(PROBLEMS))]
    assert not any(v.literals for v in spec.variants)


@pytest.mark.capture
@pytest.mark.parametrize("name", BF16_SUBSET)
def test_bf16_subset_captures(name):
    cap = captured(name, "bf16")
    check_well_formed(cap.graph)
    floats = [i for i in cap.graph.inputs if i.type.dtype in ("fp32", "bf16", "fp16")]
    assert floats and all(i.type.dtype == "bf16" for i in floats), [str(i.type) for i in floats]
    assert all(t.dtype == "bf16" for t in cap.graph.output_types if t.dtype != "i64")
    fp32 = captured(name)
    assert cap.cost.min_bytes < fp32.cost.min_bytes  # half the bytes for the floating tensors
    assert cap.cost.flops_matrix == fp32.cost.flops_matrix
    if cap.cost.matrix:
        assert cap.cost.dtype == "bf16"
    for target in all_targets():
        assert floor_of(cap, target).microseconds > 0


# --- node families ----------------------------------------------------------------------------------------

@pytest.mark.capture
def test_softmax_is_max_sub_exp_sum_div():
    graph = captured("softmax_long_rows").graph
    shape = [(n.family, n.op if isinstance(n, Reduction) else n.expr.op) for n in graph.nodes]
    assert shape == [("reduction", "max"), ("pointwise", "sub"), ("pointwise", "exp"),
                     ("reduction", "sum"), ("pointwise", "div")]
    x = graph.inputs[0]
    assert x.kind == "input" and x.type.shape == (4096, 393216)
    mx, sub, _, total, div = graph.nodes
    assert mx.axes == total.axes == (1,) and mx.out.shape == (4096,)
    assert mx.operands[0].base == x.name and sub.operands[0].base == x.name
    assert sub.operands[1].base == mx.name and sub.operands[1].strides == (1, 0)  # broadcast row max
    assert div.operands[1].base == total.name and div.operands[1].is_broadcast
    assert graph.outputs[0].base == div.name and graph.output_types[0].shape == (4096, 393216)


@pytest.mark.capture
def test_layernorm_is_two_sum_reductions_and_pointwise():
    graph = captured("layernorm").graph
    reductions = [n for n in graph.nodes if n.family == "reduction"]
    assert [(r.op, r.axes) for r in reductions] == [("sum", (1,)), ("sum", (1,))]
    assert {n.family for n in graph.nodes} == {"reduction", "pointwise"}
    ops = {e.op for n in graph.nodes if isinstance(n, Pointwise) for e in walk(n.expr) if isinstance(e, Op)}
    assert {"sub", "mul", "rsqrt", "add"} <= ops
    params = {i.target for i in graph.inputs if i.kind == "parameter"}
    assert params == {"ln.weight", "ln.bias"}
    reads = {v.base for n in graph.nodes for v in n.operands}
    assert {i.name for i in graph.inputs} <= reads


@pytest.mark.capture
@pytest.mark.parametrize("name,dims,transposed", [
    ("matmul_square", lambda c: (c["n"], c["n"], c["n"]), None),
    ("matmul_tall_skinny", lambda c: (c["m"], c["n"], c["k"]), None),
    ("matvec", lambda c: (c["m"], 1, c["k"]), None),
    ("matmul_transposed_a", lambda c: (c["m"], c["n"], c["k"]), 0),
    ("matmul_transposed_b", lambda c: (c["m"], c["n"], c["k"]), 1),
])
def test_matmul_nodes(name, dims, transposed):
    graph = captured(name).graph
    mm = only(graph, Matmul)
    m, n, k = dims(constants(name))
    assert (mm.m, mm.n, mm.k) == (m, n, k) and mm.batch == ()
    a, b = mm.operands
    assert a.shape == (m, k) and b.shape == (k, n)
    assert {a.base, b.base} == {i.name for i in graph.inputs}, "operands are the inputs: no copies"
    for index, view in enumerate((a, b)):
        rows, cols = view.shape
        if index == transposed:  # read through the stored (cols x rows) buffer: column-major
            assert view.strides == (1, rows), view
        elif cols > 1:
            assert view.strides == (cols, 1), view
    assert mm.flops() == 2 * m * n * k
    assert mm.describe().endswith({None: "[NN]", 0: "[TN]", 1: "[NT]"}[transposed])


@pytest.mark.capture
def test_bmm_is_a_batched_matmul():
    c = constants("bmm")
    mm = only(captured("bmm").graph, Matmul)
    assert mm.batch == (c["batch_size"],) and (mm.m, mm.n, mm.k) == (c["m"], c["n"], c["k"])
    assert mm.flops() == 2 * c["batch_size"] * c["m"] * c["n"] * c["k"]


@pytest.mark.capture
def test_linear_reads_the_weight_transposed():
    c = constants("gemm_bias_relu")
    graph = captured("gemm_bias_relu").graph
    mm = only(graph, Matmul)
    assert (mm.m, mm.n, mm.k) == (c["batch_size"], c["out_features"], c["in_features"])
    weight = next(i for i in graph.inputs if i.target == "linear.weight")
    assert weight.type.shape == (c["out_features"], c["in_features"])
    assert mm.operands[1].base == weight.name and mm.operands[1].strides == (1, c["in_features"])


@pytest.mark.capture
def test_gemm_bias_relu_bf16_reads_bf16_and_rounds_once():
    graph = captured("gemm_bias_relu", "bf16").graph
    mm = only(graph, Matmul)
    inputs = {i.name: i for i in graph.inputs}
    for view in mm.operands:
        assert view.base in inputs, f"the matmul reads {view.base}, a copy, not a graph input"
        assert inputs[view.base].type.dtype == "bf16"
    assert mm.out.dtype == "fp32", "the product accumulates in fp32"
    casts = [(n.name, e.dtype) for n in graph.nodes if isinstance(n, Pointwise)
             for e in walk(n.expr) if isinstance(e, Op) and e.op == CAST]
    # one rounding, fp32 -> bf16, after the bias add; no upcast copies of the bf16 operands
    assert len(casts) == 1 and casts[0][1] == "bf16", casts
    cast_node = graph.node(casts[0][0])
    assert cast_node.operands[0].base != mm.name, "the bias is added before rounding"
    assert graph.output_types[0].dtype == "bf16"


@pytest.mark.capture
def test_conv2d_has_a_bias_epilogue():
    c = constants("conv2d")
    graph = captured("conv2d").graph
    conv = only(graph, Conv)
    assert conv.stride == (1, 1) and conv.padding == (1, 1) and conv.groups == 1 and not conv.transposed
    weight, bias = (next(i for i in graph.inputs if i.target == f"conv.{t}") for t in ("weight", "bias"))
    assert conv.operands[1].base == weight.name
    assert conv.out.shape == (c["batch_size"], c["out_channels"], c["height"], c["width"])
    epilogue = [n for n in graph.nodes if n is not conv]
    assert len(epilogue) == 1 and isinstance(epilogue[0].expr, Op) and epilogue[0].expr.op == "add"
    reads = {v.base: v for v in epilogue[0].operands}
    assert set(reads) == {conv.name, bias.name}
    assert reads[bias.name].strides == (0, 1, 0, 0)  # per channel
    assert conv.flops() == 2 * prod(conv.out.shape) * c["in_channels"] * c["kernel_size"] ** 2


@pytest.mark.capture
def test_sdpa_is_one_attention_node():
    c = constants("sdpa")
    graph = captured("sdpa").graph
    attn = only(graph, Attention)
    assert len(graph.nodes) == 1
    assert attn.scale == pytest.approx(1 / math.sqrt(c["head_dim"])) and not attn.causal
    assert [v.base for v in attn.operands] == [i.name for i in graph.inputs]
    b, h, s, d = c["batch_size"], c["num_heads"], c["seq_len"], c["head_dim"]
    assert attn.flops() == 4 * b * h * s * s * d
    causal = only(captured("causal_attention_sdpa").graph, Attention)
    assert causal.causal


@pytest.mark.capture
def test_maxpool2d_is_a_pool():
    pool = only(captured("maxpool2d").graph, Pool)
    assert pool.kind == "max" and pool.kernel == (3, 3) and pool.stride == (2, 2) and pool.padding == (1, 1)
    c = constants("maxpool2d")
    assert pool.out.shape == (c["batch_size"], c["channels"], c["height"] // 2, c["width"] // 2)


@pytest.mark.capture
def test_cumsum_is_a_scan():
    scan = only(captured("cumsum").graph, Scan)
    assert scan.op == "sum" and scan.axis == 1 and not scan.reverse and not scan.exclusive
    assert scan.out.shape == scan.operands[0].shape


@pytest.mark.capture
def test_cross_entropy_gathers_the_target_logit():
    graph = captured("cross_entropy").graph
    targets = next(i for i in graph.inputs if i.type.dtype == "i64")
    logits = next(i for i in graph.inputs if i.type.dtype == "fp32")
    gathers = [(n, e) for n in graph.nodes if isinstance(n, Pointwise) for e in walk(n.expr)
               if isinstance(e, Load) and e.gather is not None]
    assert len(gathers) == 1
    node, load = gathers[0]
    assert load.gather[0] == 1  # one logit per class along the row
    index_loads = [e for e in walk(load.gather[1]) if isinstance(e, Load)]
    assert index_loads and all(e.dtype == "i64" for e in index_loads)
    # the index is the targets (with ignore_index=-100 replaced by 0): its producer reads `targets`
    index_bases = {node.operands[e.operand].base for e in index_loads}
    assert all(b == targets.name or targets.name in {v.base for v in graph.node(b).operands} for b in index_bases)
    gathered = node.operands[load.operand]
    assert gathered.base != targets.name and gathered.strides[-1] == 0  # the class axis comes from the index
    reductions = [n for n in graph.nodes if isinstance(n, Reduction)]
    assert {"max", "sum"} <= {r.op for r in reductions}
    assert any(r.operands[0].base == logits.name and r.op == "max" for r in reductions)
    assert graph.output_types[0].shape == ()


@pytest.mark.capture
def test_dtype_conversions_capture(tmp_path):
    """x.float() / .to(dtype) insert aten._assert_tensor_metadata, which computes nothing."""
    path = _write(tmp_path, "casts", "return ((x > 0).float() * x).to(torch.bfloat16).float()")
    graph = capture_problem(load_problem(path)).graph
    casts = [e.dtype for n in graph.nodes if isinstance(n, Pointwise) for e in walk(n.expr)
             if isinstance(e, Op) and e.op == CAST]
    assert sorted(casts) == ["bf16", "fp32", "fp32"]


@pytest.mark.capture
def test_arange_and_constants_fold_into_pointwise():
    """The triu mask's arange and constants are pointwise Index / Const leaves (seen with the causal proof off: with
    it, capture/causal_mask.py proves the mask causal and the attention node reads none)."""
    graph = capture_problem(spec_of("causal_attention_masked"), prove_causal=False).graph
    exprs = [e for n in graph.nodes if isinstance(n, Pointwise) for e in walk(n.expr)]
    assert any(isinstance(e, Index) for e in exprs) and any(isinstance(e, Const) for e in exprs)
    assert [n.family for n in graph.nodes].count("attention") == 1   # written out: capture/rewrite_attention.py
    (att,) = [n for n in captured("causal_attention_masked").graph.nodes if isinstance(n, Attention)]
    assert att.causal and len(att.operands) == 3


@pytest.mark.capture
@pytest.mark.parametrize("body", ["return torch.min(x, torch.tensor(0.5)) * 2.0",
                                  "return torch.min(x, torch.tensor(0.5, device=x.device)) * 2.0"])
def test_a_scalar_tensor_built_in_forward_folds_to_its_value(tmp_path, body):
    """`torch.tensor(value)` inside forward() (KernelBench level 2's min with a constant) is lifted by torch.export as a
    constant; captured on meta its value would be lost and the emitted module would read an attribute ModelNew lacks.
    It folds into the pointwise expression as Const(0.5), and the graph reads no constant input."""
    graph = capture_problem(load_problem(_write(tmp_path, "min_const", body))).graph
    assert [inp.kind for inp in graph.inputs] == ["input"]
    consts = [e.value for n in graph.nodes if isinstance(n, Pointwise) for e in walk(n.expr) if isinstance(e, Const)]
    assert 0.5 in consts and 2.0 in consts


@pytest.mark.capture
def test_a_tensor_constant_of_many_elements_is_refused_in_one_line(tmp_path):
    path = _write(tmp_path, "vec_const", "return x * torch.tensor([1.0, 2.0]).sum()")
    with pytest.raises(CaptureError) as info:
        capture_problem(load_problem(path))
    assert "\n" not in str(info.value) and "tensor constant" in str(info.value)


# --- unsupported ops ---------------------------------------------------------------------------------------

TEMPLATE = """
import torch
import torch.nn as nn

batch_size = 64
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        {body}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(TEMPLATE).replace("{body}", body))
    return path


@pytest.mark.capture
@pytest.mark.parametrize("name,body,op", [
    ("uses_sort", "return torch.sort(x, dim=-1).values", "sort"),
    ("uses_argsort", "return torch.argsort(x, dim=-1)", "sort"),
    ("uses_topk", "return torch.topk(x, 4, dim=-1).values", "topk"),
    ("uses_median", "return torch.median(x, dim=-1).values", "median"),
    ("uses_nonzero", "return torch.nonzero(x > 0).float()", "nonzero"),
    ("uses_unique", "return torch.unique(x)", "unique"),
])
def test_unsupported_op_is_a_one_line_capture_error(tmp_path, name, body, op):
    path = _write(tmp_path, name, body)
    with pytest.raises(CaptureError) as info:
        capture_problem(load_problem(path))
    message = str(info.value)
    assert isinstance(info.value, KerntailorError) and info.value.exit_code == 2
    assert "\n" not in message and name in message and op in message, message
    assert "Traceback" not in message


@pytest.mark.capture
@pytest.mark.parametrize("name,body,shape", [
    ("var_mean_dim_keepdim", "v, m = torch.var_mean(x, dim=1, keepdim=True)\n        return (x - m) / (v + 1.0)",
     (64, 256)),
    ("var_mean_unbiased_flag", "v, m = torch.var_mean(x, 1, False, True)\n        return v + m", (64, 1)),
    ("var_mean_all", "v, m = torch.var_mean(x)\n        return v * m", ()),
    ("var_dim_keepdim", "return x / torch.var(x, 1, True, True)", (64, 256)),
])
def test_var_and_var_mean_take_every_overloads_flags(tmp_path, name, body, shape):
    """var_mean.dim(x, dims, unbiased, keepdim) passes its flags positionally: its keepdim was dropped and the
    (64,) statistics met a (64, 256) input, a shape error out of capture (a traceback from `inspect`)."""
    path = _write(tmp_path, name, body)
    graph = capture_problem(load_problem(path)).graph
    assert graph.output_types[0].shape == shape


@pytest.mark.capture
def test_a_lowering_that_fails_is_a_one_line_capture_error(tmp_path, monkeypatch):
    """A handler's own error on a form of its op it did not expect is a one-line CaptureError naming the op (the
    library path in generate, a clean exit in inspect), never a traceback."""
    from kerntailor.capture import lower

    def broken(ctx, *args, **kwargs):
        raise ValueError("cannot expand (64,) to (64, 256)")

    monkeypatch.setitem(lower.HANDLERS, torch.ops.aten.tanh.default, broken)
    path = _write(tmp_path, "lowering_fails", "return torch.tanh(x)")
    with pytest.raises(CaptureError) as info:
        capture_problem(load_problem(path))
    message = str(info.value)
    assert "\n" not in message and "aten.tanh" in message and "ValueError: cannot expand" in message, message


# --- FLOPs and bytes, by hand ------------------------------------------------------------------------------

@pytest.mark.capture
def test_softmax_bytes_and_flops():
    cost = captured("softmax_long_rows").cost
    numel = 4096 * 393216
    assert cost.min_bytes == 2 * numel * 4 == 12_884_901_888
    assert cost.min_bytes_read == cost.min_bytes_written == numel * 4   # a row in, a row out
    assert cost.flops == 5 * numel and not cost.matrix  # max, sub, exp, sum, div
    assert cost.unfused_bytes == (1 + 2 + 2 + 1 + 2) * numel * 4 + 4 * 4096 * 4  # each node alone


@pytest.mark.capture
def test_matmul_square_flops_and_bytes():
    cost = captured("matmul_square").cost
    assert cost.flops == cost.flops_matrix == 2 * 4096**3 and cost.flops_vector == 0
    assert cost.min_bytes == 3 * 4096**2 * 4
    assert (cost.min_bytes_read, cost.min_bytes_written) == (2 * 4096**2 * 4, 4096**2 * 4)   # A, B in; C out
    assert cost.matrix and cost.dtype == "fp32"
    assert cost.arithmetic_intensity == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 4))


@pytest.mark.capture
def test_gemm_bias_relu_flops_on_the_matrix_units():
    c = constants("gemm_bias_relu")
    m, k, n = c["batch_size"], c["in_features"], c["out_features"]
    cost = captured("gemm_bias_relu").cost
    assert cost.matrix and cost.flops_matrix == 2 * m * n * k
    assert cost.flops_vector == 2 * m * n  # bias add and relu per output element
    assert cost.min_bytes == (m * k + n * k + n + m * n) * 4
    assert cost.min_bytes_read == (m * k + n * k + n) * 4 and cost.min_bytes_written == m * n * 4
    bf16 = captured("gemm_bias_relu", "bf16").cost
    assert bf16.flops_matrix == 2 * m * n * k and bf16.min_bytes == (m * k + n * k + n + m * n) * 2


@pytest.mark.capture
def test_fp32_convolution_flops_are_counted_apart():
    """An fp32 convolution's FLOPs are kept apart (cuDNN runs them on TF32 by PyTorch's default: the library's floor,
    measure/floor.library_floor_s); a bf16 one's and a matmul's are not."""
    cost = captured("conv2d").cost
    assert cost.flops_conv_fp32 == cost.flops_matrix > 0 and cost.dtype == "fp32"
    assert captured("conv2d", "bf16").cost.flops_conv_fp32 == 0
    assert captured("matmul_square").cost.flops_conv_fp32 == 0


@pytest.mark.capture
def test_relu_bytes():
    c = constants("relu")
    numel = c["batch_size"] * c["dim"]
    cost = captured("relu").cost
    assert cost.min_bytes == 2 * numel * 4 and cost.flops == numel
    assert cost.min_bytes_read == cost.min_bytes_written == numel * 4      # copy-like: as many bytes each way


@pytest.mark.capture
def test_reductions_split_bytes_into_many_reads_and_few_writes():
    """A loss reads two tensors and writes one scalar; a mean over the middle axis writes 1/dim1 of what it
    reads: the floor charges almost all of their bytes at the read rate."""
    c = constants("huber_loss")
    numel = c["batch_size"] * c["dim"]
    huber = captured("huber_loss").cost
    assert (huber.min_bytes_read, huber.min_bytes_written) == (2 * numel * 4, 4)
    assert huber.min_bytes == huber.min_bytes_read + huber.min_bytes_written
    c = constants("mean_middle_axis")
    b, r, x = c["batch_size"], c["dim1"], c["dim2"]
    mean = captured("mean_middle_axis").cost
    assert (mean.min_bytes_read, mean.min_bytes_written) == (b * r * x * 4, b * x * 4)
    bf16 = captured("huber_loss", "bf16").cost
    assert (bf16.min_bytes_read, bf16.min_bytes_written) == (2 * numel * 2, 2)


# --- floors against hand-computed values -------------------------------------------------------------------

@pytest.mark.capture
def test_softmax_floor_on_mi300x():
    floor = floor_of(captured("softmax_long_rows"), get_target("mi300x"))
    assert floor.bound == "memory" and floor.microseconds == pytest.approx(2431.1, abs=0.05)
    assert round(floor.microseconds, 1) == 2431.1
    assert floor.bandwidth == 5.3e12 and not floor.matrix


@pytest.mark.capture
def test_fp32_matmul_floor_on_h100_uses_the_vector_rate():
    floor = floor_of(captured("matmul_square"), get_target("h100"))
    assert floor.peak_flops == 67e12  # no fp32 matrix units on Hopper: CUDA-core rate
    assert floor.bound == "compute"
    assert floor.microseconds == pytest.approx(2 * 4096**3 / 67e12 * 1e6)  # 2051.3 us
    assert round(floor.microseconds, 1) == 2051.3
    assert floor.memory_seconds * 1e6 == pytest.approx(3 * 4096**2 * 4 / 3.35e12 * 1e6)  # 60.1 us


@pytest.mark.capture
def test_fp32_matmul_floor_on_mi300x_uses_fp32_matrix_cores():
    floor = floor_of(captured("matmul_square"), get_target("mi300x"))
    assert floor.peak_flops == 163.4e12 and floor.matrix and floor.rate_dtype == "fp32"
    assert floor.bound == "compute" and round(floor.microseconds, 1) == 841.1  # 137.4 GFLOP / 163.4 TF


@pytest.mark.capture
def test_bf16_gemm_floor_on_mi300x():
    cap = captured("gemm_bias_relu", "bf16")
    floor = floor_of(cap, get_target("mi300x"))
    assert floor.peak_flops == 1307.4e12 and floor.rate_dtype == "bf16" and floor.matrix
    assert floor.bound == "compute"
    matrix_us = 2 * 4096 * 4096 * 14336 / 1307.4e12 * 1e6  # 367.9 us; the epilogue adds < 0.1 us
    assert matrix_us <= floor.microseconds <= matrix_us + 0.1
    assert floor.memory_seconds * 1e6 == pytest.approx(cap.cost.min_bytes / 5.3e12 * 1e6)


def test_an_input_read_in_part_is_charged_its_widest_view():
    """One layer of a stacked (layers, n) cache selected and doubled: the floor charges the layer read, not the
    stack (profile's extracted KV-cache groups read one layer of the model's stacked cache input); an input read
    whole, or by views wider than itself (a cat's shifted operand view), is charged its size, an unused one
    nothing."""
    from kerntailor.capture.cost import graph_cost
    from kerntailor.ir.expr import Const, Load, Op
    from kerntailor.ir.nodes import Graph, GraphInput, Pointwise
    from kerntailor.ir.types import TensorType, View

    layers, n = 4, 1024
    stack = GraphInput("stack", TensorType((layers, n), "fp32"), "input", "arg0")
    row = GraphInput("row", TensorType((1, n), "fp32"), "input", "arg1")
    unused = GraphInput("unused", TensorType((n,), "fp32"), "input", "arg2")
    twice = Pointwise("pw0", (View("stack", (n,), (1,), 2 * n),), TensorType((n,), "fp32"), "mul",
                      Op("mul", (Load(0, "fp32"), Const(2.0, "fp32")), "fp32"))
    wide = Pointwise("pw1", (View("row", (3, n), (n, 1), 0),), TensorType((3, n), "fp32"), "cat", Load(0, "fp32"))
    graph = Graph((stack, row, unused), (twice, wide), (View.of("pw0", (n,)), View.of("pw1", (3, n))),
                  (TensorType((n,), "fp32"), TensorType((3, n), "fp32")))
    cost = graph_cost(graph)
    assert cost.min_bytes_read == n * 4 + n * 4          # one layer of the stack; all of row (capped); unused: 0
    assert cost.min_bytes_written == 4 * n * 4
