"""Row reductions after a matrix product, computed from the product's tiles (a GEMM "row tail").

    out[m] = post(reduce_n f(C[m, n]))          C = A @ B plus its pointwise epilogue

A kernel that writes C and a second kernel that reads it back to reduce its rows move 2·M·N elements
through HBM that the output never needs. Instead, each BLOCK_M x BLOCK_N output tile reduces its own
columns (a partial per row and tile), and the tiles of one row block combine their partials:

- a *plain* reduction (sum, max, min of values that depend on no other reduction): partials combine
  with the same operation (sigmoid-then-sum, amax, mean = sum / N);
- a *shifted* sum Σ exp(u − c), where c is a row value computed from plain reductions (logsumexp's
  max, guarded against ±inf): each tile uses its own c_t (from its partial max) and stores it beside its
  partial sum; the combine rescales, Σ_t s_t · exp(c_t − C), with C from the combined reductions. Exact
  algebra (exp(u − C) = exp(u − c_t) · exp(c_t − C)), as in online softmax.

A full-size value that needs the finished row (softmax's normalized output) is a row tail only where one
tile spans every column (`whole_row`: the caller's promise, a convolution's few output channels; the tile's
reductions are then the rows' and the value is computed and stored on the tile). Anything else (a sum of
products of two reductions' values) is not a row tail: the planner keeps the reduction as its own
kernel. So is a tail that reads a tensor other than the product's tile, or a batched product.

A convolution is an implicit GEMM whose rows are the output positions (n, o..) and whose columns are the output
channels (codegen/conv.py), so a reduction over its channel axis (dim 1) after its epilogue is the same row tail:
one value per (n, o..), row-major, which is exactly the reduced output's order (keepdim or not). Only a
convolution of one group: a depthwise one's tile spans no group of channels. A transposed one takes its tails in the
gather form (its rows the output positions, as a forward one's), and a row tail also in the phase form where one tile
holds every channel (its rows are one output phase's, indexed from their coordinates: no partials; codegen/conv.py's
work_sizes).

A reduction over a convolution's spatial axes (all of them: global pooling, adaptive_avg_pool to 1, a mean over
(2, 3)) is a *column tail* (`column_tail`): one value per (n, channel), reduced over the tile's rows of one image.
The writer tiles the rows per image (codegen/conv.py), each tile stores its per-channel partial and the image's
last tile combines them in tile order. Plain reductions only (sum, max, min), no full-size output, tail members
reading nothing but the group and per-channel values (a bias after the pooling, at the convolution's rank: keepdim);
a convolution of one group, as for the row tail.

Levels: a member is "full" (one value per element of the anchor's output, M x N) or "reduced" (one per row).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from kerntailor.ir.nodes import Conv, Graph, Matmul, Node, Reduction, exp_of_difference

TAIL_OPS = ("sum", "max", "min")
FLOAT = ("fp32", "bf16", "fp16")


@dataclass(frozen=True)
class TailReduction:
    name: str
    op: str            # sum | max | min
    shift: str = ""    # shifted sums: the row value c in Σ exp(u − c)


@dataclass(frozen=True)
class RowTail:
    """The tail of a matmul group: which members are per-row values, and how each reduction combines.
    `nodes` are the tail's members in graph order (reductions, the full-size values that feed them and
    depend on another reduction, and the per-row values); the rest of the group is the GEMM epilogue."""

    nodes: tuple[str, ...]
    reduced: frozenset[str]
    reductions: tuple[TailReduction, ...]
    # one tile must span the row: a full-size member that needs the finished row is written, or a shifted sum's c is
    # the unguarded max itself
    whole_row: bool = False

    @property
    def channels(self) -> tuple[str, ...]:
        """The per-tile values each tile stores for the combine: every reduction, then every shift."""
        shifts = tuple(r.shift for r in self.reductions if r.shift)
        return tuple(dict.fromkeys(tuple(r.name for r in self.reductions) + shifts))   # a shift may be a reduction


def column_axis(anchor: Node) -> int | None:
    """The axis of `anchor`'s output that its tile's columns walk and a row tail reduces: a (not batched)
    product's last, a convolution's channels (one group); None for an anchor without a row tail."""
    if isinstance(anchor, Matmul):
        return None if anchor.batch or anchor.m <= 1 or anchor.n <= 1 else len(anchor.out.shape) - 1
    if isinstance(anchor, Conv):
        return None if anchor.groups != 1 or anchor.out.shape[1] <= 1 else 1
    return None


def row_tail(graph: Graph, members: list[str], outputs: set[str], whole_row: bool = False) -> RowTail | None:
    """The row tail of a group of `members` (graph order: a Matmul or a Conv first, its epilogue, then
    reductions over its column axis), or None when the group has no reduction or the reductions do not
    combine from tiles. `outputs` are the members written for readers outside the group: all must be
    per-row values, or with `whole_row` (one tile will span every column) also full-size members that
    depend on a reduction (softmax's output)."""
    nodes = [graph.node(n) for n in members]
    axis = column_axis(nodes[0])
    if axis is None:
        return None
    space = tuple(nodes[0].out.shape)
    rows = prod(space) // space[axis]
    names = set(members)
    if not any(isinstance(n, Reduction) for n in nodes):
        return None
    level: dict[str, str] = {}
    for n in nodes:
        if isinstance(n, Reduction):
            if n.op not in TAIL_OPS or n.axes != (axis,) or n.out.dtype not in FLOAT:
                return None
            level[n.name] = "reduced"
        elif n.out.shape == space:
            level[n.name] = "full"
        elif n.out.numel == rows:
            level[n.name] = "reduced"
        else:
            return None
    deps = {n.name: _reductions_before(graph, n.name, names) for n in nodes}
    tail = [n.name for n in nodes[1:] if isinstance(n, Reduction) or deps[n.name]]
    if set(outputs) - set(level):
        return None
    full_outputs = {o for o in outputs if level[o] == "full"}
    if full_outputs and not (whole_row and full_outputs <= set(tail)):
        return None
    if isinstance(nodes[0], Conv) and any(graph.node(o).out.shape not in _conv_row_shapes(space)
                                          for o in set(outputs) - full_outputs):
        return None   # its sizes are the host's derived ones: a row value reshaped has no expression there
    for n in nodes[1:]:
        in_tail = n.name in tail
        if level[n.name] == "reduced" and not in_tail:
            return None   # a per-row value of something other than the product's rows
        for view in n.operands:
            if view.base not in names:
                if in_tail and not (isinstance(nodes[0], Conv) and _outside_read(view, level[n.name], len(space))):
                    return None   # a tail member reading another tensor: not covered
                continue
            if not _reads_as(view, level[view.base], level[n.name] if not isinstance(n, Reduction) else "full",
                             space, axis):
                return None
    reductions = []
    plain: set[str] = set()
    unguarded = False
    for r in (n for n in nodes if isinstance(n, Reduction)):
        base = r.operands[0].base
        if not deps[base]:
            reductions.append(TailReduction(r.name, r.op))
            plain.add(r.name)
            continue
        shift = _shifted_sum(graph, r, names, level, deps)
        if shift is None or not deps[shift] <= plain:
            return None
        if shift in plain:   # c the max itself, unguarded (softmax's): a tile of -inf would combine to NaN
            if not whole_row:
                return None
            unguarded = True
        reductions.append(TailReduction(r.name, "sum", shift))
    return RowTail(tuple(tail), frozenset(n for n in tail if level[n] == "reduced"), tuple(reductions),
                   bool(full_outputs) or unguarded)


def column_tail(graph: Graph, members: list[str], outputs: set[str]) -> RowTail | None:
    """The column tail (module docstring) of a conv group of `members` (the Conv first, its epilogue, then
    reductions over every spatial axis and pointwise values of theirs): a RowTail whose `reduced` members hold
    one value per (n, channel), or None. Every output must be such a value."""
    nodes = [graph.node(n) for n in members]
    conv = nodes[0]
    if not isinstance(conv, Conv) or column_axis(conv) is None or len(conv.out.shape) < 3:
        return None
    space = tuple(conv.out.shape)
    per_image = space[0] * space[1]
    names = set(members)
    level: dict[str, str] = {}
    reductions = []
    for n in nodes[1:]:
        if isinstance(n, Reduction):
            if n.op not in TAIL_OPS or n.axes != tuple(range(2, len(space))) or n.out.dtype not in FLOAT:
                return None
            if any(level.get(v.base) != "full" for v in n.operands):
                return None
            level[n.name] = "reduced"
            reductions.append(TailReduction(n.name, n.op))
        elif n.out.shape == space and all(level.get(v.base, "full") == "full" for v in n.operands):
            level[n.name] = "full"
        elif n.out.numel == per_image and any(level.get(v.base) == "reduced" for v in n.operands):
            level[n.name] = "reduced"
        else:
            return None
        for view in n.operands:
            if view.base not in names:
                if level[n.name] == "reduced" and not _per_channel(view, len(space)):
                    return None   # a tail member reading another tensor other than per channel: not covered
                continue
            source = level.get(view.base, "full")
            if source == "full" and not _reads_as(view, "full", "full", space, 1):
                return None
            if source == "reduced" and not _contiguous(view):
                return None   # a (n, c) value read in another order than row-major (n, c)
    if not reductions or any(level.get(o) != "reduced" for o in outputs):
        return None
    tail = tuple(n for n in members[1:] if level[n] == "reduced")
    return RowTail(tail, frozenset(tail), tuple(reductions))


def _per_channel(view, rank: int) -> bool:
    """Whether `view` (of the anchor's rank) varies along the channels at most (a bias (C, 1, 1) after global
    pooling, a scalar): the tile reads it as one (1, BLOCK_N) row."""
    return len(view.shape) == rank and all(st == 0 or s == 1 for k, (s, st) in
                                           enumerate(zip(view.shape, view.strides)) if k != 1)


def _outside_read(view, level: str, rank: int) -> bool:
    """Whether a conv row tail's member of `level` may read `view` of a tensor outside the group: a full-size one a
    per-channel value (a bias (C, 1, 1) after softmax over the channels: the tile's channels index it), a per-row one
    a scalar (every axis broadcast: a bias (1, 1, 1, 1) after logsumexp)."""
    if level == "full":
        return _per_channel(view, rank)
    return all(st == 0 or s == 1 for s, st in zip(view.shape, view.strides))


def _contiguous(view) -> bool:
    """Whether `view` reads its buffer row-major from offset 0 (size-1 axes aside)."""
    return view.offset == 0 and all(st == prod(view.shape[k + 1:]) for k, (s, st) in
                                    enumerate(zip(view.shape, view.strides)) if s != 1)


def _conv_row_shapes(space: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The shapes a convolution's row value may be written in: reduced over the channels, keepdim or not."""
    return (space[:1] + (1,) + space[2:], space[:1] + space[2:])


def _reads_as(view, source: str, reader: str, space: tuple[int, ...], axis: int) -> bool:
    """Whether a member of level `source` is read by one of level `reader` as the tile code reads it: a
    full value aligned with the anchor's elements, a row value broadcast along the column axis (stride 0
    there, the rows' own row-major strides elsewhere: a product's (1, 0)), or a row value reshaped
    (contiguous) by another row value."""
    contiguous = tuple(prod(view.shape[k + 1:]) for k in range(len(view.shape)))
    aligned = view.offset == 0 and all(st == c for s, st, c in zip(view.shape, view.strides, contiguous) if s != 1)
    if source == "full":
        return reader == "full" and tuple(view.shape) == space and aligned
    if reader == "full":
        row_strides = tuple(prod(s for j, s in enumerate(space[k + 1:], k + 1) if j != axis)
                            for k in range(len(space)))
        return tuple(view.shape) == space and view.offset == 0 and view.strides[axis] == 0 and all(
            st == r for k, (s, st, r) in enumerate(zip(space, view.strides, row_strides)) if s != 1 and k != axis)
    return prod(view.shape) == prod(space) // space[axis] and aligned


def _shifted_sum(graph: Graph, r: Reduction, names: set[str], level: dict, deps: dict) -> str | None:
    """c when reduction r is Σ exp(u − c) over a full-size u that depends on no reduction and a row value
    c (read broadcast along the reduced axis); else None."""
    found = exp_of_difference(graph, r.operands[0].base) if r.op == "sum" else None
    if found is None or found[0] not in names:
        return None
    _, u, c = found
    if u.base not in names or level.get(u.base) != "full" or deps[u.base]:
        return None
    if c.base not in names or level.get(c.base) != "reduced":
        return None
    own = {c.base} if isinstance(graph.node(c.base), Reduction) else set()   # c the max itself (softmax's)
    if deps[r.operands[0].base] != deps[c.base] | own:
        return None
    return c.base


def _reductions_before(graph: Graph, name: str, names: set[str]) -> frozenset[str]:
    """The group's reductions that member `name` depends on (not counting itself)."""
    return frozenset(n.name for n in graph.upstream([op.base for op in graph.node(name).operands], names)
                     if isinstance(n, Reduction))


__all__ = ["RowTail", "TailReduction", "column_axis", "column_tail", "row_tail"]
