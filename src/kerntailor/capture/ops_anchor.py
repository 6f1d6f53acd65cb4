"""Anchor ops that codegen treats as whole kernels: matmul, convolution, attention, pooling, recurrent layers."""

from __future__ import annotations

import math

import torch

from kerntailor.capture.lower import Lowering, Unsupported, lowers, unusable
from kerntailor.capture.ops_pointwise import apply
from kerntailor.ir.expr import CAST, Load, Op
from kerntailor.ir.nodes import Attention, Conv, Matmul, Pointwise, Pool, Recurrent
from kerntailor.ir.types import TensorType, View

aten = torch.ops.aten


@lowers(aten.mm.default)
def _mm(ctx: Lowering, a: View, b: View):
    (m, k), n = a.shape, b.shape[1]
    return ctx.emit(Matmul(ctx.fresh("mm"), (a, b), ctx.out_type(), "mm", (), m, n, k))


@lowers(aten.bmm.default)
def _bmm(ctx: Lowering, a: View, b: View):
    (bs, m, k), n = a.shape, b.shape[2]
    return ctx.emit(Matmul(ctx.fresh("bmm"), (a, b), ctx.out_type(), "bmm", (bs,), m, n, k))


@lowers(aten.addmm.default, aten.baddbmm.default)
def _addmm(ctx: Lowering, bias: View, a: View, b: View, *, beta=1, alpha=1):
    """beta·bias + alpha·(a @ b): the product accumulates in fp32, the epilogue rounds once."""
    out = ctx.out_type()
    batch = a.shape[:-2]
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    acc_dtype = "fp32" if out.dtype in ("bf16", "fp16") else out.dtype
    acc = ctx.emit(Matmul(ctx.fresh("mm"), (a, b), TensorType(out.shape, acc_dtype), "addmm", batch, m, n, k))
    if alpha != 1:
        acc = apply(ctx, "mul", acc, alpha, origin="addmm alpha", out=TensorType(out.shape, acc_dtype))
    term = bias if beta == 1 else apply(ctx, "mul", bias, beta, origin="addmm beta",
                                        out=TensorType(bias.shape, ctx.dtype(bias)))
    total = apply(ctx, "add", acc, term, origin="addmm bias", out=TensorType(out.shape, acc_dtype))
    if acc_dtype != out.dtype:
        total = ctx.pointwise([total], lambda loads: Op(CAST, (loads[0],), out.dtype), out, "addmm round")
    return total


def _tuple(v, n: int) -> tuple[int, ...]:
    v = tuple(v) if isinstance(v, (list, tuple)) else (v,)
    return v * n if len(v) == 1 else v


@lowers(aten.convolution.default)
def _convolution(ctx: Lowering, x: View, w: View, bias, stride, padding, dilation, transposed: bool,
                 output_padding, groups: int):
    nd = len(w.shape) - 2
    out = ctx.out_type()
    y = ctx.emit(Conv(ctx.fresh("conv"), (x, w), out, "convolution", _tuple(stride, nd), _tuple(padding, nd),
                      _tuple(dilation, nd), groups, bool(transposed),
                      _tuple(output_padding, nd) if transposed else (0,) * nd))
    if bias is not None:
        y = apply(ctx, "add", y, bias.reshape((bias.shape[0],) + (1,) * nd), origin="conv bias", out=out)
    return y


@lowers(aten.scaled_dot_product_attention.default)
def _sdpa(ctx: Lowering, q: View, k: View, v: View, attn_mask=None, dropout_p: float = 0.0,
          is_causal: bool = False, scale=None, enable_gqa: bool = False):
    """softmax(q kᵀ · scale + mask) v. Grouped-query attention (enable_gqa: k and v with fewer heads, each shared
    by Hq / Hkv query heads) keeps k and v at their own head count; so does the usual way of writing it without
    enable_gqa, `k.repeat_interleave(Hq // Hkv, dim=-3)` (a broadcast copy, `_shared_heads`): the attention reads
    the un-repeated k and v, and the copies die. A mask is read at the query's heads (expanded to (..., Hq, Lq, Lk)),
    as the output is, so it needs no care under GQA (transformers' Llama passes the causal mask it builds under
    torch.export with 8 kv heads for 32 query heads)."""
    if dropout_p:
        raise Unsupported("attention dropout")
    k, v = _shared_heads(ctx, k), _shared_heads(ctx, v)
    if len(q.shape) < 3 or len(k.shape) != len(q.shape) or len(v.shape) != len(q.shape):
        raise Unsupported(f"attention over operands of ranks {len(q.shape)}, {len(k.shape)}, {len(v.shape)}")
    if q.shape[:-3] != k.shape[:-3] or k.shape[:-2] != v.shape[:-2] or q.shape[-3] % k.shape[-3]:
        raise Unsupported(f"attention of q {list(q.shape)} over k {list(k.shape)}, v {list(v.shape)}")
    scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    operands = (q, k, v) + ((attn_mask.expand(q.shape[:-1] + (k.shape[-2],)),) if attn_mask is not None else ())
    return ctx.emit(Attention(ctx.fresh("attn"), operands, ctx.out_type(), "scaled_dot_product_attention",
                              float(scale), bool(is_causal)))


def _shared_heads(ctx: Lowering, view: View) -> View:
    """`view` itself, or, where it reads a copy of a tensor repeated along a new axis after the heads (what
    repeat_interleave lowers to: (..., H, G, S, D) with stride 0 along G, read back as (..., H·G, S, D)), a view of
    that tensor with H heads: the attention shares each head between G query heads (GQA) without the copy."""
    copy = next((n for n in ctx.nodes if n.name == view.base), None)
    if not isinstance(copy, Pointwise) or len(copy.operands) != 1 or copy.expr != Load(0, copy.out.dtype):
        return view
    src = copy.operands[0]
    shape = copy.out.shape
    if len(shape) != len(view.shape) + 1 or not view.is_contiguous or ctx.dtype(src) != copy.out.dtype:
        return view
    heads, group = shape[-4], shape[-3]
    if src.strides[-3] != 0 or view.shape[:-3] != shape[:-4] or view.shape[-3] != heads * group \
            or view.shape[-2:] != shape[-2:]:
        return view
    keep = [a for a in range(len(shape)) if a != len(shape) - 3]
    return View(src.base, tuple(shape[a] for a in keep), tuple(src.strides[a] for a in keep), src.offset)


@lowers(aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default, aten.max_pool1d.default,
        aten.max_pool2d.default)
def _max_pool(ctx: Lowering, x: View, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    nd = len(kernel) if isinstance(kernel, (list, tuple)) else 1
    kernel = _tuple(kernel, nd)
    stride = _tuple(stride, nd) if stride else kernel
    with_indices = "with_indices" in ctx.fx_node.target.__name__
    out = ctx.out_type(0 if with_indices else None)
    y = ctx.emit(Pool(ctx.fresh("maxpool"), (x,), out, "max_pool", "max", kernel, stride, _tuple(padding, nd),
                      _tuple(dilation, nd), bool(ceil_mode)))
    return (y, unusable("max_pool indices")) if with_indices else y


@lowers(aten.avg_pool1d.default, aten.avg_pool2d.default, aten.avg_pool3d.default)
def _avg_pool(ctx: Lowering, x: View, kernel, stride=(), padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):
    nd = len(kernel) if isinstance(kernel, (list, tuple)) else 1
    kernel = _tuple(kernel, nd)
    stride = _tuple(stride, nd) if stride else kernel
    return ctx.emit(Pool(ctx.fresh("avgpool"), (x,), ctx.out_type(), "avg_pool", "avg", kernel, stride,
                         _tuple(padding, nd), (1,) * nd, bool(ceil_mode), bool(count_include_pad), divisor_override))


@lowers(aten.lstm.input, aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input)
def _recurrent(ctx: Lowering, x: View, hx, params, has_biases: bool, num_layers: int, dropout: float,
               train: bool, bidirectional: bool, batch_first: bool):
    """A whole recurrent layer stack, one Recurrent node per result (they share `call`; unused ones are
    dropped with the other dead nodes). Kept whole by capture/export.py (never unrolled step by step)."""
    if train and dropout:
        raise Unsupported("recurrent dropout in training mode")
    mode = ctx.fx_node.target.__name__.split(".")[0]
    states = tuple(hx) if isinstance(hx, (list, tuple)) else (hx,)
    call = ctx.fresh(mode)
    operands = (x,) + states + tuple(params)
    results = []
    for index in range(len(states) + 1):
        node = Recurrent(f"{call}_{index}", operands, ctx.out_type(index), mode, mode, call, index, len(states),
                         bool(has_biases), int(num_layers), float(dropout), bool(train), bool(bidirectional),
                         bool(batch_first))
        results.append(ctx.emit(node))
    return tuple(results)


@lowers(aten.randn.default, aten.rand.default, aten.randn_like.default, aten.rand_like.default,
        aten.randint.low, aten.randint.default, aten.normal.float_float, aten.bernoulli.p, aten.bernoulli.default,
        aten.native_dropout.default)
def _random(ctx: Lowering, *args, **kwargs):
    raise Unsupported("forward() draws random numbers, so its output is not a function of its inputs and no "
                      "kernel can be checked against it")
