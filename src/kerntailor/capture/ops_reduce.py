"""Reductions, and the composites lowered into them: mean, var, vector norms, LayerNorm, GroupNorm, BatchNorm
(eval, or by batch statistics: InstanceNorm)."""

from __future__ import annotations

import math

import torch

from kerntailor.capture.lower import Lowering, Unsupported, lowers, unusable
from kerntailor.capture.ops_pointwise import apply
from kerntailor.ir.expr import CAST, Op
from kerntailor.ir.nodes import Reduction, Scan
from kerntailor.ir.types import TensorType, View

aten = torch.ops.aten


def _axes(dims, ndim: int) -> tuple[int, ...]:
    if dims is None or dims == [] or dims == ():
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(sorted({d % ndim for d in dims})) if ndim else ()


def reduce(ctx: Lowering, op: str, x: View, axes: tuple[int, ...], keepdim: bool, dtype: str,
           origin: str) -> View:
    """A Reduction node; the result is returned with keepdim applied as a View."""
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    squeezed = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    out = TensorType(squeezed, dtype)
    view = ctx.emit(Reduction(ctx.fresh(op), (x,), out, origin, op, axes, False))
    return view.reshape(kept) if keepdim else view


def _reduction(op: str):
    def handler(ctx: Lowering, x: View, dims=None, keepdim: bool = False, *, dtype=None):
        if isinstance(dims, bool):  # argmax(x, dim=None, keepdim) has dims positional; keep the rule simple
            dims, keepdim = None, dims
        axes = _axes(dims, len(x.shape))
        return reduce(ctx, op, x, axes, keepdim, ctx.out_type().dtype, ctx.fx_node.target.__name__)
    return handler


lowers(aten.sum.dim_IntList, aten.sum.default)(_reduction("sum"))
lowers(aten.amax.default, aten.max.default)(_reduction("max"))
lowers(aten.amin.default, aten.min.default)(_reduction("min"))
lowers(aten.prod.dim_int, aten.prod.default)(_reduction("prod"))
lowers(aten.argmax.default)(_reduction("argmax"))
lowers(aten.argmin.default)(_reduction("argmin"))
lowers(aten.any.dim, aten.any.dims, aten.any.default)(_reduction("any"))
lowers(aten.all.dim, aten.all.default)(_reduction("all"))


@lowers(aten.max.dim, aten.min.dim)
def _max_dim(ctx: Lowering, x: View, dim: int, keepdim: bool = False):
    kind = "max" if ctx.fx_node.target.__name__.startswith("max") else "min"
    axes = _axes(dim, len(x.shape))
    values = reduce(ctx, kind, x, axes, keepdim, ctx.out_type(0).dtype, f"{kind}.dim")
    indices = reduce(ctx, f"arg{kind}", x, axes, keepdim, ctx.out_type(1).dtype, f"{kind}.dim")
    return (values, indices)


def mean(ctx: Lowering, x: View, axes: tuple[int, ...], keepdim: bool, dtype: str) -> View:
    total = reduce(ctx, "sum", x, axes, keepdim, dtype, "mean")
    n = 1
    for a in axes:
        n *= x.shape[a]
    return apply(ctx, "div", total, float(n), origin="mean", out=TensorType(total.shape, dtype))


@lowers(aten.mean.dim, aten.mean.default)
def _mean(ctx: Lowering, x: View, dims=None, keepdim: bool = False, *, dtype=None):
    return mean(ctx, x, _axes(dims, len(x.shape)), keepdim, ctx.out_type().dtype)


def variance(ctx: Lowering, x: View, axes: tuple[int, ...], correction: float, dtype: str) -> tuple[View, View]:
    """(var, mean), both with keepdim; two passes in the IR (codegen may use Welford)."""
    mu = mean(ctx, x, axes, True, dtype)
    d = apply(ctx, "sub", x, mu, origin="var", out=TensorType(x.shape, dtype))
    sq = apply(ctx, "mul", d, d, origin="var", out=TensorType(x.shape, dtype))
    total = reduce(ctx, "sum", sq, axes, True, dtype, "var")
    n = 1
    for a in axes:
        n *= x.shape[a]
    var = apply(ctx, "div", total, float(max(n - correction, 0)), origin="var", out=TensorType(total.shape, dtype))
    return var, mu


def _squeeze(view: View, axes: tuple[int, ...], keepdim: bool) -> View:
    return view if keepdim else view.squeeze(axes)


def _var_args(dims, args, correction, keepdim, unbiased) -> tuple:
    """(dims, correction, keepdim) of var/var_mean in any overload: .dim(x, dims, unbiased, keepdim) takes its flags
    positionally, .default(x, unbiased) its one flag where the dims go, .correction keywords."""
    if args and isinstance(args[0], bool):
        unbiased = args[0]
        keepdim = args[1] if len(args) > 1 else keepdim
    if isinstance(dims, bool):
        unbiased, dims = dims, None
    return dims, (correction if correction is not None else (1 if unbiased is None or unbiased else 0)), keepdim


@lowers(aten.var.dim, aten.var.correction, aten.var.default)
def _var(ctx: Lowering, x: View, dims=None, *args, correction=None, keepdim: bool = False, unbiased=None):
    dims, c, keepdim = _var_args(dims, args, correction, keepdim, unbiased)
    axes = _axes(dims, len(x.shape))
    var, _ = variance(ctx, x, axes, c, ctx.out_type().dtype)
    return _squeeze(var, axes, keepdim)


@lowers(aten.var_mean.correction, aten.var_mean.dim, aten.var_mean.default)
def _var_mean(ctx: Lowering, x: View, dims=None, *args, correction=None, keepdim: bool = False, unbiased=None):
    dims, c, keepdim = _var_args(dims, args, correction, keepdim, unbiased)
    axes = _axes(dims, len(x.shape))
    var, mu = variance(ctx, x, axes, c, ctx.out_type(0).dtype)
    return (_squeeze(var, axes, keepdim), _squeeze(mu, axes, keepdim))


def normalize(ctx: Lowering, x: View, axes: tuple[int, ...], eps: float, dtype: str) -> View:
    """(x - mean) * rsqrt(var + eps) over `axes` (biased variance), shape of x."""
    var, mu = variance(ctx, x, axes, 0, dtype)
    rstd = apply(ctx, "rsqrt", apply(ctx, "add", var, eps, origin="norm", out=TensorType(var.shape, dtype)),
                 origin="norm", out=TensorType(var.shape, dtype))
    centred = apply(ctx, "sub", x, mu, origin="norm", out=TensorType(x.shape, dtype))
    return apply(ctx, "mul", centred, rstd, origin="norm", out=TensorType(x.shape, dtype))


def affine(ctx: Lowering, y: View, weight: View | None, bias: View | None, shape: tuple[int, ...],
           dtype: str) -> View:
    """y * weight + bias with weight/bias viewed as `shape` (broadcast against y)."""
    if weight is not None:
        y = apply(ctx, "mul", y, weight.reshape(shape), origin="affine", out=TensorType(y.shape, dtype))
    if bias is not None:
        y = apply(ctx, "add", y, bias.reshape(shape), origin="affine", out=TensorType(y.shape, dtype))
    return y


@lowers(aten.layer_norm.default, aten.native_layer_norm.default)
def _layer_norm(ctx: Lowering, x: View, normalized_shape, weight=None, bias=None, eps=1e-5, *rest):
    nd = len(normalized_shape)
    axes = tuple(range(len(x.shape) - nd, len(x.shape)))
    native = ctx.fx_node.target.__name__.startswith("native")
    dtype = ctx.out_type(0 if native else None).dtype
    y = normalize(ctx, x, axes, eps, dtype)
    y = affine(ctx, y, weight, bias, tuple(normalized_shape), dtype)
    if native:
        raise Unsupported("native_layer_norm's mean/rstd outputs")
    return y


@lowers(aten.group_norm.default)
def _group_norm(ctx: Lowering, x: View, num_groups: int, weight=None, bias=None, eps=1e-5, *rest):
    n, c = x.shape[0], x.shape[1]
    shape = (n, num_groups, x.numel // (n * num_groups))
    grouped = x.reshape(shape) or ctx.materialize(x, ctx.dtype(x), "group_norm copy").reshape(shape)
    dtype = ctx.out_type().dtype
    y = normalize(ctx, grouped, (2,), eps, dtype).reshape(x.shape)
    channel = (c,) + (1,) * (len(x.shape) - 2)
    return affine(ctx, y, weight, bias, channel, dtype)


@lowers(aten._native_batch_norm_legit_no_training.default)
def _batch_norm_eval(ctx: Lowering, x: View, weight, bias, running_mean: View, running_var: View,
                     momentum: float, eps: float):
    dtype = ctx.out_type(0).dtype
    c = x.shape[1]
    channel = (c,) + (1,) * (len(x.shape) - 2)
    stat = TensorType(channel, dtype)
    rstd = apply(ctx, "rsqrt", apply(ctx, "add", running_var.reshape(channel), eps, origin="batch_norm", out=stat),
                 origin="batch_norm", out=stat)
    centred = apply(ctx, "sub", x, running_mean.reshape(channel), origin="batch_norm", out=TensorType(x.shape, dtype))
    y = apply(ctx, "mul", centred, rstd, origin="batch_norm", out=TensorType(x.shape, dtype))
    y = affine(ctx, y, weight, bias, channel, dtype)
    return (y, unusable("batch_norm saved mean"), unusable("batch_norm saved rstd"))


@lowers(aten._native_batch_norm_legit.no_stats)
def _batch_norm_batch_stats(ctx: Lowering, x: View, weight, bias, training: bool, momentum: float, eps: float):
    """Normalized by the batch's own statistics over every axis but the channels (axis 1), biased variance:
    InstanceNorm (torch views the input as (1, N*C, *spatial)) and BatchNorm without running statistics."""
    dtype = ctx.out_type(0).dtype
    axes = tuple(k for k in range(len(x.shape)) if k != 1)
    y = normalize(ctx, x, axes, eps, dtype)
    y = affine(ctx, y, weight, bias, (x.shape[1],) + (1,) * (len(x.shape) - 2), dtype)
    return (y, unusable("batch_norm saved mean"), unusable("batch_norm saved rstd"))


@lowers(aten._native_batch_norm_legit_functional.default)
def _batch_norm_functional(ctx: Lowering, x: View, weight, bias, running_mean: View, running_var: View,
                           training: bool, momentum: float, eps: float):
    """BatchNorm as a module in training mode runs it (KernelBench builds models and never calls eval()): the
    output is normalized by the batch's statistics, as no_stats; its other results are the updated running
    statistics, which torch.export turns into buffer mutations. Those are not outputs (lower.py): a generated
    ModelNew leaves its running statistics as they were, which changes nothing forward() returns in training
    mode (kernel.py says so in forward(); capture.py captures training-mode BatchNorm without the update)."""
    if not training:
        return _batch_norm_eval(ctx, x, weight, bias, running_mean, running_var, momentum, eps) + (
            unusable("batch_norm running mean"), unusable("batch_norm running var"))
    y, mean, rstd = _batch_norm_batch_stats(ctx, x, weight, bias, training, momentum, eps)
    return (y, mean, rstd, unusable("batch_norm running mean update"), unusable("batch_norm running var update"))


@lowers(aten.linalg_vector_norm.default)
def _vector_norm(ctx: Lowering, x: View, ord=2, dims=None, keepdim: bool = False, *, dtype=None):
    """‖x‖_p over `dims`: p = 2 (and Frobenius) sqrt(Σ x²); 1 Σ|x|; ±inf max/min |x|; 0 the count of
    non-zeros; any other p (Σ|x|^p)^(1/p)."""
    out = ctx.out_type()
    axes = _axes(dims, len(x.shape))
    full = TensorType(x.shape, out.dtype)
    if ord == 2:
        summand = apply(ctx, "mul", x, x, origin="vector_norm", out=full)
    elif ord == 0:
        nonzero = apply(ctx, "ne", x, 0, origin="vector_norm", out=TensorType(x.shape, "bool"))
        summand = ctx.pointwise([nonzero], lambda loads: Op(CAST, (loads[0],), out.dtype), full, "vector_norm")
    else:
        summand = apply(ctx, "abs", x, origin="vector_norm", out=full)
        if math.isinf(ord):
            return reduce(ctx, "max" if ord > 0 else "min", summand, axes, keepdim, out.dtype, "vector_norm")
        if ord != 1:
            summand = apply(ctx, "pow", summand, float(ord), origin="vector_norm", out=full)
    total = reduce(ctx, "sum", summand, axes, keepdim, out.dtype, "vector_norm")
    if ord in (0, 1):
        return total
    if ord == 2:
        return apply(ctx, "sqrt", total, origin="vector_norm", out=TensorType(total.shape, out.dtype))
    return apply(ctx, "pow", total, 1.0 / float(ord), origin="vector_norm", out=TensorType(total.shape, out.dtype))


@lowers(aten.cumsum.default, aten.cumprod.default)
def _scan(ctx: Lowering, x: View, dim: int, *, dtype=None):
    op = "sum" if ctx.fx_node.target.__name__.startswith("cumsum") else "prod"
    out = ctx.out_type()
    return ctx.emit(Scan(ctx.fresh(f"cum{op}"), (x,), out, f"cum{op}", op, dim % len(x.shape)))

