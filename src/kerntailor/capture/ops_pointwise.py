"""Pointwise ops: each becomes a Pointwise node whose expression combines the Loads of its operands."""

from __future__ import annotations

import math

import torch

from kerntailor.capture.lower import Lowering, Unsupported, lowers
from kerntailor.ir.expr import CAST, Const, Expr, Index, Load, Op
from kerntailor.ir.nodes import Pointwise
from kerntailor.ir.types import TensorType, View

aten = torch.ops.aten


def apply(ctx: Lowering, op: str, *args, origin: str, out: TensorType | None = None) -> View:
    """Pointwise `op` over tensor (View) and scalar arguments, typed by the FX node's output."""
    out = out or ctx.out_type()
    views = [a for a in args if isinstance(a, View)]
    dtypes = [ctx.dtype(v) for v in views]
    # scalars take the dtype of the tensor operands (weak typing), or the output's
    scalar_dtype = dtypes[0] if dtypes else out.dtype

    def build(loads: list[Expr]) -> Expr:
        it = iter(loads)
        exprs = [next(it) if isinstance(a, View) else Const(a, scalar_dtype) for a in args]
        simplified = _identity(op, exprs)
        if simplified is not None:
            return simplified
        compute = "bool" if op in ("eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "not",
                                   "isnan", "isinf") else out.dtype
        return Op(op, tuple(exprs), compute)

    return ctx.pointwise(views, build, out, origin)


def _identity(op: str, exprs: list[Expr]) -> Expr | None:
    """x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0 → x."""
    if len(exprs) != 2:
        return None
    a, b = exprs
    one = {"mul": (1,), "div": (1,), "add": (0,), "sub": (0,)}.get(op)
    if one is None:
        return None
    if isinstance(b, Const) and not isinstance(a, Const) and b.value in one and b.value is not False:
        return a
    if op in ("mul", "add") and isinstance(a, Const) and not isinstance(b, Const) and a.value in one:
        return b
    return None


def _unary(op: str, origin: str):
    return lambda ctx, x, *rest: apply(ctx, op, x, origin=origin)


def _binary(op: str, origin: str):
    return lambda ctx, a, b: apply(ctx, op, a, b, origin=origin)


for _op, _names in {
    "neg": [aten.neg], "abs": [aten.abs], "exp": [aten.exp], "exp2": [aten.exp2], "expm1": [aten.expm1],
    "log": [aten.log], "log2": [aten.log2], "log1p": [aten.log1p], "sqrt": [aten.sqrt],
    "rsqrt": [aten.rsqrt], "reciprocal": [aten.reciprocal], "sin": [aten.sin], "cos": [aten.cos],
    "tan": [aten.tan], "tanh": [aten.tanh], "erf": [aten.erf], "sigmoid": [aten.sigmoid],
    "relu": [aten.relu], "floor": [aten.floor], "ceil": [aten.ceil], "round": [aten.round],
    "trunc": [aten.trunc], "sign": [aten.sign], "not": [aten.logical_not, aten.bitwise_not],
    "isnan": [aten.isnan], "isinf": [aten.isinf],
}.items():
    lowers(*[n.default for n in _names])(_unary(_op, _names[0].__name__))

for _op, _names in {
    "mul": [aten.mul.Tensor, aten.mul.Scalar], "max": [aten.maximum.default],
    "min": [aten.minimum.default], "eq": [aten.eq.Tensor, aten.eq.Scalar], "ne": [aten.ne.Tensor, aten.ne.Scalar],
    "lt": [aten.lt.Tensor, aten.lt.Scalar], "le": [aten.le.Tensor, aten.le.Scalar],
    "gt": [aten.gt.Tensor, aten.gt.Scalar], "ge": [aten.ge.Tensor, aten.ge.Scalar],
    "and": [aten.logical_and.default, aten.bitwise_and.Tensor], "or": [aten.logical_or.default, aten.bitwise_or.Tensor],
    "xor": [aten.logical_xor.default], "pow": [aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar],
    "fmod": [aten.fmod.Tensor, aten.fmod.Scalar], "remainder": [aten.remainder.Tensor, aten.remainder.Scalar],
    "atan2": [aten.atan2.default],
}.items():
    lowers(*_names)(_binary(_op, str(_names[0]).split(".")[1]))


@lowers(aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar, aten.rsub.Scalar)
def _add_sub(ctx: Lowering, a, b, alpha=1):
    name = ctx.fx_node.target.__name__  # add.Tensor / sub.Scalar / rsub.Scalar
    op = "add" if name.startswith("add") else "sub"
    if name.startswith("rsub"):
        a, b = b, a
    if alpha != 1:
        b = apply(ctx, "mul", b, alpha, origin="alpha") if isinstance(b, View) else b * alpha
    return apply(ctx, op, a, b, origin=name.split(".")[0])


@lowers(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div(ctx: Lowering, a, b, rounding_mode=None):
    if rounding_mode is None:
        return apply(ctx, "div", a, b, origin="div")
    if rounding_mode in ("floor", "trunc"):
        return apply(ctx, f"{rounding_mode}div", a, b, origin=f"div {rounding_mode}")
    raise Unsupported(f"rounding_mode={rounding_mode}")


@lowers(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(ctx: Lowering, cond, a, b):
    return apply(ctx, "where", cond, a, b, origin="where")


@lowers(aten.clamp.default, aten.clamp.Tensor, aten.clamp_min.default, aten.clamp_max.default)
def _clamp(ctx: Lowering, x, lo=None, hi=None):
    name = ctx.fx_node.target.__name__
    if name.startswith("clamp_max"):
        lo, hi = None, lo
    out = ctx.out_type()
    views = [v for v in (x, lo, hi) if isinstance(v, View)]

    def build(loads: list[Expr]) -> Expr:
        it = iter(loads)
        val = next(it)
        for bound, op in ((lo, "max"), (hi, "min")):
            if bound is None:
                continue
            other = next(it) if isinstance(bound, View) else Const(bound, out.dtype)
            val = Op(op, (val, other), out.dtype)
        return val

    return ctx.pointwise(views, build, out, "clamp")


@lowers(aten._to_copy.default)
def _to_copy(ctx: Lowering, x, *args, **kwargs):
    out = ctx.out_type()
    src = ctx.dtype(x)
    if src == out.dtype:
        return x
    return ctx.pointwise([x], lambda loads: Op(CAST, (loads[0],), out.dtype), out, f"cast to {out.dtype}")


@lowers(aten.scalar_tensor.default, aten.full.default, aten.full_like.default, aten.zeros_like.default,
        aten.ones_like.default, aten.zeros.default, aten.ones.default, aten.new_full.default,
        aten.new_zeros.default, aten.new_ones.default)
def _full(ctx: Lowering, *args, **kwargs):
    name = ctx.fx_node.target.__name__
    out = ctx.out_type()
    if name.startswith(("zeros", "new_zeros")):
        value = 0
    elif name.startswith(("ones", "new_ones")):
        value = 1
    elif name.startswith("scalar_tensor"):
        value = args[0]
    elif name.startswith(("full_like", "new_full")):
        value = args[1]
    else:  # full(size, value)
        value = args[1]
    if isinstance(value, float) and math.isinf(value):
        value = float(value)
    return ctx.constant(value, out, name.split(".")[0])


@lowers(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(ctx: Lowering, *args, **kwargs):
    out = ctx.out_type()
    name = ctx.fx_node.target.__name__
    start, step = (0, 1) if name == "arange.default" else (args[0], args[2] if len(args) > 2 else 1)
    if not all(isinstance(v, int) for v in (start, step)):
        raise Unsupported("non-integer arange")
    return ctx.emit(Pointwise(ctx.fresh("iota"), (), out, "arange", Index(0, out.dtype, start, step)))


@lowers(aten.gather.default)
def _gather(ctx: Lowering, x: View, dim: int, index: View, sparse_grad: bool = False):
    out = ctx.out_type()
    dim = dim % len(x.shape)
    if any(a < b for i, (a, b) in enumerate(zip(x.shape, out.shape)) if i != dim):
        raise Unsupported("gather with an index larger than the input")
    # out[i] = x[i with axis `dim` replaced by index[i]]
    strides = tuple(0 if i == dim else st for i, st in enumerate(x.strides))
    x_view = View(x.base, out.shape, strides, x.offset)
    node = Pointwise(ctx.fresh("gather"), (x_view, index.expand(out.shape)), out, "gather",
                     Load(0, ctx.dtype(x), gather=(x.strides[dim], Load(1, ctx.dtype(index)))))
    return ctx.emit(node)


@lowers(aten.index.Tensor)
def _index(ctx: Lowering, x: View, indices):
    """x[..., idx, ...] with one index tensor (any shape) at one axis: an index_select (Swin's relative position
    bias table); with several, broadcast against each other, a gather of single elements (_gather_points).
    Boolean index tensors (a data-dependent shape): not lowered."""
    given = [(k, t) for k, t in enumerate(indices) if t is not None]
    if not given or any(not isinstance(t, View) or ctx.dtype(t) == "bool" for _, t in given):
        raise Unsupported("advanced indexing with boolean index tensors")
    if len(given) == 1:
        dim, index = given[0]
        return _gather_rows(ctx, x, dim, index, "index", wrap_negative=True)
    return _gather_points(ctx, x, given)


def _gather_points(ctx: Lowering, x: View, given: list[tuple[int, View]]) -> View:
    """x[i0, i1, ...] with an index tensor at each of several axes, broadcast against each other (transformers'
    causal mask under torch.export reads `packed[batch_idx, q_idx]`): each output element reads the one element
    of x their values address together, Σ index_k · stride_k (a negative index counts from the end). The broadcast
    shape takes the indexed axes' place where those are adjacent, else it comes first (numpy's rule)."""
    out = ctx.out_type()
    dims = [k for k, _ in given]
    rest = [a for a in range(len(x.shape)) if a not in dims]
    width = len(out.shape) - len(rest)   # rank of the broadcast shape
    start = dims[0] if dims == list(range(dims[0], dims[0] + len(dims))) else 0
    broadcast = out.shape[start:start + width]
    strides = [0] * len(out.shape)
    for a, r in zip([a for a in range(len(out.shape)) if not start <= a < start + width], rest):
        strides[a] = x.strides[r]
    operands, address = [View(x.base, out.shape, tuple(strides), x.offset)], None
    for j, (k, t) in enumerate(given, 1):
        e = t.expand(broadcast)
        operands.append(View(e.base, out.shape, (0,) * start + e.strides + (0,) * (len(out.shape) - start - width),
                             e.offset))
        dt = ctx.dtype(t)
        i = Load(j, dt)
        i = Op("where", (Op("lt", (i, Const(0, dt)), "bool"), Op("add", (i, Const(x.shape[k], dt)), dt), i), dt)
        term = Op("mul", (i, Const(x.strides[k], dt)), dt)
        address = term if address is None else Op("add", (address, term), dt)
    node = Pointwise(ctx.fresh("gather"), tuple(operands), out, "index", Load(0, ctx.dtype(x), gather=(1, address)))
    return ctx.emit(node)


@lowers(aten.embedding.default, aten.index_select.default)
def _index_select(ctx: Lowering, weight: View, indices_or_dim, maybe_index=None, *rest):
    name = ctx.fx_node.target.__name__
    if name.startswith("embedding"):
        dim, index = 0, indices_or_dim
    else:
        dim, index = indices_or_dim % len(weight.shape), maybe_index
    return _gather_rows(ctx, weight, dim, index, name.split(".")[0])


def _gather_rows(ctx: Lowering, weight: View, dim: int, index: View, origin: str,
                 wrap_negative: bool = False) -> View:
    """out[lead..., idx..., trail...] = weight[lead..., index[idx...], trail...]; with `wrap_negative` an index
    below zero counts from the end (x[idx]; index_select and embedding take no negative indices)."""
    out = ctx.out_type()
    # out[lead..., idx..., trail...] = weight[lead..., index[idx...], trail...]
    n_idx = len(index.shape)
    lead = len(weight.shape[:dim])
    trail = len(weight.shape) - dim - 1
    w_view = View(weight.base, out.shape, weight.strides[:dim] + (0,) * n_idx + weight.strides[dim + 1:],
                  weight.offset)
    idx_view = View(index.base, out.shape, (0,) * lead + index.strides + (0,) * trail, index.offset)
    i = Load(1, ctx.dtype(index))
    if wrap_negative:
        i_dtype = ctx.dtype(index)
        wrapped = Op("add", (i, Const(weight.shape[dim], i_dtype)), i_dtype)
        i = Op("where", (Op("lt", (i, Const(0, i_dtype)), "bool"), wrapped, i), i_dtype)
    node = Pointwise(ctx.fresh("gather"), (w_view, idx_view), out, origin,
                     Load(0, ctx.dtype(weight), gather=(weight.strides[dim], i)))
    return ctx.emit(node)


@lowers(aten.cat.default)
def _cat(ctx: Lowering, tensors, dim: int = 0):
    out = ctx.out_type()
    dim = dim % len(out.shape)
    parts = [t for t in tensors if t.numel > 0]
    views, bounds = [], []
    start = 0
    for t in parts:
        # the part's View over the whole output: shifted back by its start along `dim`
        strides = t.strides
        views.append(View(t.base, out.shape, strides, t.offset - start * strides[dim]))
        bounds.append((start, start + t.shape[dim]))
        start += t.shape[dim]
    index = Index(dim, "i32")

    def build(_loads: list[Expr]) -> Expr:
        expr: Expr | None = None
        for i in reversed(range(len(parts))):
            lo, hi = bounds[i]
            valid = Op("and", (Op("ge", (index, Const(lo, "i32")), "bool"),
                               Op("lt", (index, Const(hi, "i32")), "bool")), "bool")
            load = Load(i, ctx.dtype(parts[i]), valid=valid)
            expr = load if expr is None else Op("where", (valid, load, expr), out.dtype)
        return expr

    node = Pointwise(ctx.fresh("cat"), tuple(views), out, "cat", build([]), dim, tuple(t.shape[dim] for t in parts))
    return ctx.emit(node)


@lowers(aten.constant_pad_nd.default)
def _constant_pad(ctx: Lowering, x: View, pad, value=0):
    """F.pad(x, pad, value=v): each padded axis reads x shifted by its low pad where the index is inside x,
    and `value` elsewhere (the masked load of `cat`). Negative pads crop: a slice, no mask."""
    out = ctx.out_type()
    nd = len(x.shape)
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]  # last axis first
    lows = [0] * nd
    for i, (low, high) in enumerate(pairs):
        axis = nd - 1 - i
        if low < 0 or high < 0:  # crop first: the remaining pads are non-negative
            x = x.slice(axis, max(-low, 0), x.shape[axis] - max(-high, 0), 1)
        lows[axis] = max(low, 0)
    padded = [k for k in range(nd) if x.shape[k] != out.shape[k] or lows[k]]
    if not padded:
        return x
    offset = x.offset - sum(lows[k] * x.strides[k] for k in padded)
    view = View(x.base, out.shape, x.strides, offset)
    valid = None
    for k in padded:
        index = Index(k, "i32")
        inside = Op("and", (Op("ge", (index, Const(lows[k], "i32")), "bool"),
                            Op("lt", (index, Const(lows[k] + x.shape[k], "i32")), "bool")), "bool")
        valid = inside if valid is None else Op("and", (valid, inside), "bool")
    load = Load(0, ctx.dtype(x), valid=valid)
    fill = Const(value, out.dtype)
    expr = load if value == 0 else Op("where", (valid, load, fill), out.dtype)
    return ctx.emit(Pointwise(ctx.fresh("pad"), (view,), out, "constant_pad_nd", expr))


@lowers(aten.copy.default)
def _copy(ctx: Lowering, x: View, src, non_blocking: bool = False):
    """The functional form of `x.copy_(src)`: src's values, broadcast to x's shape, in x's dtype."""
    out = ctx.out_type()
    if not isinstance(src, View):
        return ctx.constant(src, out, "copy")
    src = src.expand(out.shape)
    if ctx.dtype(src) == out.dtype:
        return src
    return ctx.pointwise([src], lambda loads: Op(CAST, (loads[0],), out.dtype), out, f"cast to {out.dtype}")
