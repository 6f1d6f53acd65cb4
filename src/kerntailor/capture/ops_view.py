"""View ops: each maps a View to a View of the same buffer (a copy only where strides cannot express it)."""

from __future__ import annotations

import torch

from kerntailor.capture.lower import Lowering, Unsupported, lowers
from kerntailor.ir.types import View

aten = torch.ops.aten


def _dims(dims, ndim: int) -> tuple[int, ...]:
    if isinstance(dims, int):
        dims = [dims]
    return tuple(d % ndim for d in dims) if ndim else tuple(dims)


@lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.view_copy.default)
def _view(ctx: Lowering, x: View, shape) -> View:
    shape = ctx.out_type().shape
    viewed = x.reshape(shape)
    if viewed is None:
        # strides cannot express this reshape of a permuted view: materialize once, then view
        viewed = ctx.materialize(x, ctx.out_type().dtype, "reshape copy").reshape(shape)
    return viewed


@lowers(aten.permute.default, aten.permute_copy.default)
def _permute(ctx: Lowering, x: View, dims) -> View:
    return x.permute(_dims(dims, len(x.shape)))


@lowers(aten.transpose.int)
def _transpose(ctx: Lowering, x: View, a: int, b: int) -> View:
    order = list(range(len(x.shape)))
    a, b = a % len(order), b % len(order)
    order[a], order[b] = order[b], order[a]
    return x.permute(tuple(order))


@lowers(aten.t.default)
def _t(ctx: Lowering, x: View) -> View:
    return x.permute((1, 0)) if len(x.shape) == 2 else x


@lowers(aten.expand.default, aten.expand_copy.default)
def _expand(ctx: Lowering, x: View, shape, implicit: bool = False) -> View:
    return x.expand(ctx.out_type().shape)


@lowers(aten.unsqueeze.default, aten.unsqueeze_copy.default)
def _unsqueeze(ctx: Lowering, x: View, dim: int) -> View:
    return x.unsqueeze(dim)


@lowers(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default, aten.squeeze_copy.dims)
def _squeeze(ctx: Lowering, x: View, dims=None) -> View:
    if dims is None:
        dims = tuple(range(len(x.shape)))
    return x.squeeze(_dims(dims, len(x.shape)))


@lowers(aten.slice.Tensor, aten.slice_copy.Tensor)
def _slice(ctx: Lowering, x: View, dim: int = 0, start=None, end=None, step: int = 1) -> View:
    dim = dim % len(x.shape)
    size = x.shape[dim]
    start = 0 if start is None else start
    end = size if end is None else min(end, size)
    return x.slice(dim, start, end, step)


@lowers(aten.select.int, aten.select_copy.int)
def _select(ctx: Lowering, x: View, dim: int, index: int) -> View:
    return x.select(dim % len(x.shape), index)


@lowers(aten.flip.default)
def _flip(ctx: Lowering, x: View, dims) -> View:
    return x.flip(_dims(dims, len(x.shape)))


@lowers(aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default, aten.clone.default,
        aten.contiguous.default)
def _identity(ctx: Lowering, x: View, *args, **kwargs) -> View:
    # a functional graph: a clone holds the same values; the planner decides what is materialized
    return x


@lowers(aten.as_strided.default)
def _as_strided(ctx: Lowering, x: View, size, stride, offset=None) -> View:
    if not x.is_contiguous:
        raise Unsupported("as_strided of a non-contiguous view")
    return View(x.base, tuple(size), tuple(stride), (offset or 0) + x.offset)


@lowers(aten._assert_tensor_metadata.default)
def _assert_metadata(ctx: Lowering, *args, **kwargs) -> None:
    # torch.export inserts this check before a dtype conversion (x.float(), x.to(dtype)); it computes nothing
    return None


@lowers(aten._assert_async.msg, aten._assert_async.default)
def _assert_values(ctx: Lowering, *args, **kwargs) -> None:
    """A check of the input's values that a decomposition inserts (one_hot: every class in range). It computes
    nothing the outputs read; the reference runs it on every input the referee draws, and a kernel cannot raise."""
    return None


@lowers(aten.split_with_sizes.default, aten.split_with_sizes_copy.default)
def _split_with_sizes(ctx: Lowering, x: View, sizes, dim: int = 0) -> list[View]:
    dim = dim % len(x.shape)
    parts, start = [], 0
    for size in sizes:
        parts.append(x.slice(dim, start, start + size, 1))
        start += size
    return parts


@lowers(aten.split.Tensor, aten.split_copy.Tensor)
def _split(ctx: Lowering, x: View, size: int, dim: int = 0) -> list[View]:
    """torch.split / torch.chunk: pieces of `size` along `dim`, the last one shorter."""
    dim = dim % len(x.shape)
    total = x.shape[dim]
    return [x.slice(dim, start, min(start + size, total), 1) for start in range(0, max(total, 1), size)]


@lowers(aten.unbind.int, aten.unbind_copy.int)
def _unbind(ctx: Lowering, x: View, dim: int = 0) -> list[View]:
    dim = dim % len(x.shape)
    return [x.select(dim, i) for i in range(x.shape[dim])]


@lowers(aten.unfold.default, aten.unfold_copy.default)
def _unfold(ctx: Lowering, x: View, dim: int, size: int, step: int) -> View:
    """Tensor.unfold: windows of `size` every `step` along `dim`, as a new last axis (a view: no copy)."""
    if not x.shape:
        return View(x.base, (size,), (1,), x.offset)
    dim = dim % len(x.shape)
    count = (x.shape[dim] - size) // step + 1
    shape = x.shape[:dim] + (count,) + x.shape[dim + 1:] + (size,)
    strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:] + (x.strides[dim],)
    return View(x.base, shape, strides, x.offset)


@lowers(aten.repeat.default)
def _repeat(ctx: Lowering, x: View, repeats) -> View:
    """x tiled `repeats` times per axis: a copy through a view (repeat_k, size_k)... with stride 0 on each
    repeat axis, then read as the tiled shape (InstanceNorm's affine weight, repeated once per sample)."""
    repeats = tuple(repeats)
    lead = len(repeats) - len(x.shape)
    shape = (1,) * lead + x.shape
    strides = (0,) * lead + x.strides
    tiled_shape, tiled_strides = [], []
    for r, s, st in zip(repeats, shape, strides):
        tiled_shape += [r, s]
        tiled_strides += [0, st]
    out = ctx.out_type()
    if all(r == 1 for r in repeats):
        return x.reshape(out.shape) or ctx.materialize(x, out.dtype, "repeat").reshape(out.shape)
    tiled = View(x.base, tuple(tiled_shape), tuple(tiled_strides), x.offset)
    return ctx.materialize(tiled, out.dtype, "repeat").reshape(out.shape)
