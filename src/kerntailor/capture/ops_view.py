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
