"""A reference evaluator of the IR, for tests: runs a captured Graph on real CPU tensors in float64.

Pointwise expressions, reductions and matrix products are computed from the IR alone (Views read through
their strides and offsets, masked and gathered loads), so a test can check that a lowering computes what
the eager module computes. Anchors without a generator (convolution, attention, pooling, scans, recurrent
layers) run as the library call their node's fields describe: the same call a generated module would make.
"""

from __future__ import annotations

import math
from functools import reduce as fold

import torch
import torch.nn.functional as F

from kerntailor.ir.expr import CAST, Const, Index, Load
from kerntailor.ir.nodes import Attention, Conv, Graph, Matmul, Pointwise, Pool, Recurrent, Reduction, Scan
from kerntailor.ir.types import View

TORCH = {"fp64": torch.float64, "fp32": torch.float64, "bf16": torch.float64, "fp16": torch.float64,
         "i64": torch.int64, "i32": torch.int64, "i16": torch.int64, "i8": torch.int64, "u8": torch.int64,
         "bool": torch.bool}

UNARY = {"neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1,
         "log": torch.log, "log2": torch.log2, "log1p": torch.log1p, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
         "reciprocal": torch.reciprocal, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh,
         "erf": torch.erf, "sigmoid": torch.sigmoid, "relu": torch.relu, "floor": torch.floor, "ceil": torch.ceil,
         "round": torch.round, "trunc": torch.trunc, "sign": torch.sign, "not": torch.logical_not,
         "isnan": torch.isnan, "isinf": torch.isinf, "square": torch.square}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
          "max": torch.maximum, "min": torch.minimum, "fmod": torch.fmod, "remainder": torch.remainder,
          "atan2": torch.atan2, "and": torch.logical_and, "or": torch.logical_or, "xor": torch.logical_xor,
          "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
          "floordiv": torch.floor_divide}


def addresses(view: View) -> torch.Tensor:
    """The element offset of every element of `view` (shape view.shape)."""
    addr = torch.full(view.shape, view.offset, dtype=torch.int64)
    for axis, (size, stride) in enumerate(zip(view.shape, view.strides)):
        shape = [1] * len(view.shape)
        shape[axis] = size
        addr = addr + (torch.arange(size, dtype=torch.int64) * stride).reshape(shape)
    return addr


def read(buffer: torch.Tensor, view: View, extra: torch.Tensor | None = None,
         valid: torch.Tensor | None = None) -> torch.Tensor:
    flat = buffer.reshape(-1)
    addr = addresses(view) if extra is None else addresses(view) + extra
    if valid is None:
        assert bool(((addr >= 0) & (addr < flat.numel())).all()), f"{view} reads outside {flat.numel()} elements"
        return flat[addr]
    safe = torch.where(valid, addr, torch.zeros_like(addr)).clamp(0, max(flat.numel() - 1, 0))
    value = flat[safe]
    return torch.where(valid, value, torch.zeros((), dtype=value.dtype))


def _index(e: Index, shape: tuple[int, ...]) -> torch.Tensor:
    idx = torch.arange(shape[e.axis], dtype=torch.int64) * e.step + e.start
    view = [1] * len(shape)
    view[e.axis] = shape[e.axis]
    return idx.reshape(view).expand(shape)


def eval_expr(e, node: Pointwise, env: dict[str, torch.Tensor]) -> torch.Tensor:
    shape = node.out.shape
    if isinstance(e, Const):
        return torch.full(shape, e.value, dtype=TORCH[e.dtype])
    if isinstance(e, Index):
        return _index(e, shape)
    if isinstance(e, Load):
        view = node.operands[e.operand]
        extra = None
        if e.gather is not None:
            stride, index = e.gather
            extra = eval_expr(index, node, env).to(torch.int64) * stride
        valid = eval_expr(e.valid, node, env).to(torch.bool) if e.valid is not None else None
        return read(env[view.base], view, extra, valid)
    args = [eval_expr(a, node, env) for a in e.args]
    if e.op == CAST:
        return args[0].to(TORCH[e.dtype])
    if e.op == "where":
        return torch.where(args[0].to(torch.bool), args[1], args[2])
    if e.op in UNARY:
        return UNARY[e.op](args[0])
    return BINARY[e.op](*args)


def _reduce(node: Reduction, x: torch.Tensor) -> torch.Tensor:
    axes = list(node.axes)
    if node.op == "sum":
        return x.sum(dim=axes) if axes else x
    if node.op in ("max", "min"):
        return (x.amax if node.op == "max" else x.amin)(dim=axes)
    if node.op == "prod":
        return fold(lambda t, a: t.prod(dim=a), sorted(axes, reverse=True), x)
    if node.op in ("any", "all"):
        return (x.to(torch.bool).any if node.op == "any" else x.to(torch.bool).all)(dim=axes)
    assert len(axes) == 1, node
    return (x.argmax if node.op == "argmax" else x.argmin)(dim=axes[0])


def _anchor(node, xs: list[torch.Tensor]) -> torch.Tensor:
    if isinstance(node, Matmul):
        return torch.matmul(xs[0], xs[1])
    if isinstance(node, Conv):
        return torch.ops.aten.convolution(xs[0], xs[1], None, list(node.stride), list(node.padding),
                                          list(node.dilation), node.transposed, list(node.output_padding),
                                          node.groups)
    if isinstance(node, Attention) and node.written_out:   # as written: scale, mask (replaced or added), softmax
        scores = xs[0] @ xs[1].transpose(-2, -1) * node.scale
        if node.causal:   # top-left aligned, masked keys replaced (a mask proved causal: causal_mask.py)
            lq, lk = scores.shape[-2:]
            above = torch.ones(lq, lk, dtype=torch.bool, device=scores.device).triu(1)
            scores = scores.masked_fill(above, float("-inf"))
        if len(xs) > 3 and node.fill_on is not None:
            scores = scores.masked_fill(xs[3].to(torch.bool) == node.fill_on, float("-inf"))
        elif len(xs) > 3:
            scores = scores + (torch.where(xs[3], 0.0, float("-inf")) if xs[3].dtype == torch.bool else xs[3])
        if node.score == "relu":   # ReLU attention: the weights are relu(scores), not normalised
            return torch.relu(scores) @ xs[2]
        probs = torch.softmax(scores, dim=-1)
        if node.safe_softmax:
            probs = probs.masked_fill(scores.isneginf().all(-1, keepdim=True), 0.0)
        return probs @ xs[2]
    if isinstance(node, Attention):
        mask = xs[3] if len(xs) > 3 else None
        return F.scaled_dot_product_attention(xs[0], xs[1], xs[2], attn_mask=mask, is_causal=node.causal,
                                              scale=node.scale)
    if isinstance(node, Pool):
        nd = len(node.kernel)
        if node.kind == "max":
            fn = getattr(F, f"max_pool{nd}d")
            return fn(xs[0], node.kernel, node.stride, node.padding, node.dilation, node.ceil_mode)
        fn = getattr(F, f"avg_pool{nd}d")
        extra = {"divisor_override": node.divisor} if nd > 1 else {}
        return fn(xs[0], node.kernel, node.stride, node.padding, node.ceil_mode, node.count_include_pad, **extra)
    if isinstance(node, Scan):
        x = xs[0].flip(node.axis) if node.reverse else xs[0]
        y = x.cumsum(node.axis) if node.op == "sum" else x.cumprod(node.axis)
        return y.flip(node.axis) if node.reverse else y
    if isinstance(node, Recurrent):
        op = getattr(torch.ops.aten, node.mode).input
        states = xs[1:1 + node.hidden]
        hx = list(states) if node.mode == "lstm" else states[0]
        params = xs[1 + node.hidden:]
        return op(xs[0], hx, params, node.has_biases, node.num_layers, node.dropout, node.train,
                  node.bidirectional, node.batch_first)[node.result]
    raise NotImplementedError(type(node).__name__)


def evaluate_graph(graph: Graph, values: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """The graph's outputs (float64 for floating ones) given each input's tensor by GraphInput.target."""
    env: dict[str, torch.Tensor] = {}
    for inp in graph.inputs:
        t = values[inp.target]
        env[inp.name] = t.double() if t.is_floating_point() else t
    for node in graph.nodes:
        if isinstance(node, Pointwise):
            out = eval_expr(node.expr, node, env)
        else:
            xs = [read(env[v.base], v) for v in node.operands]
            out = _reduce(node, xs[0]) if isinstance(node, Reduction) else _anchor(node, xs)
        out = out.to(TORCH[node.out.dtype])
        assert tuple(out.shape) == node.out.shape, (node.name, tuple(out.shape), node.out.shape)
        env[node.name] = out.contiguous()
    return [read(env[v.base], v) for v in graph.outputs]


def graph_values(graph: Graph, model: torch.nn.Module, inputs: list) -> dict[str, torch.Tensor]:
    """GraphInput.target -> tensor: forward's inputs as argN, parameters and buffers (and tensor attributes
    capture registered as buffers) by their dotted names in the model."""
    values = {f"arg{i}": x for i, x in enumerate(inputs)}
    for inp in graph.inputs:
        if inp.target not in values:
            values[inp.target] = fold(getattr, inp.target.split("."), model)
    return values


def check_against_eager(graph: Graph, model: torch.nn.Module, inputs: list, rtol: float = 1e-9) -> None:
    """The graph evaluated in float64 equals the eager model run in float64 on the same values."""
    model = model.double()
    inputs = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        expected = model(*inputs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    got = evaluate_graph(graph, graph_values(graph, model, inputs))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert tuple(g.shape) == tuple(e.shape)
        scale = max(float(e.abs().max()) if e.numel() else 0.0, 1e-30)
        assert torch.allclose(g.to(e.dtype), e, rtol=rtol, atol=rtol * scale), \
            f"max |diff| {float((g.to(e.dtype) - e).abs().max())} (scale {scale:.3g})"
    assert math.isfinite(sum(float(g.double().abs().sum()) for g in got))
