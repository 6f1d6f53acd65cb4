"""A fused group's iteration space, as a pure function of the group: `iteration_space(gen, group)`.

The group's space (a pointwise group's output shape, a reduction's input shape) is first *refined* with the
shapes of members that reshape it (GroupNorm's statistics run over (N, G, C/G·H·W) and its affine over
(N, C, H, W): the kernel iterates over (N, G, C/G, H·W)), then *coalesced*: adjacent axes that every operand
reads contiguously (or broadcasts along both) merge into one, so an index is unravelled over as few sizes as
possible. Each member has a level: "full" (one value per element of the space), "reduced" (one per row) or
"inline" (a pointwise member recomputed where its one consumer reads it through a narrowing view).

The space also maps views onto the kernel's axes: a view's strides over the refined dims (`refined`) and over
the kernel's axes (`final`), and where an inline member's reads land (`shift`, `inline_reads`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from math import prod

from kerntailor.capture.generalize import Generalized, SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.sizes import const, is_whole, poly_quotient, product, quotient, same
from kerntailor.ir.expr import Const, Index, Load, Op
from kerntailor.ir.nodes import Node, Pointwise, Reduction
from kerntailor.ir.types import contiguous_strides
from kerntailor.plan.fusion import FusionGroup, narrowing_shift

Frame = tuple[int, ...]


def walk(expr):
    """Every sub-expression of `expr`, gathers' indices and validity masks included."""
    yield expr
    if isinstance(expr, Op):
        for a in expr.args:
            yield from walk(a)
    elif isinstance(expr, Load):
        if expr.gather is not None:
            yield from walk(expr.gather[1])
        if expr.valid is not None:
            yield from walk(expr.valid)


def symbolic_strides(shape) -> list[SizeExpr | None]:
    """Row-major strides of a symbolic shape (None where one is not a monomial)."""
    return [product(shape[k + 1:]) if k + 1 < len(shape) else const(1) for k in range(len(shape))]


@dataclass(frozen=True)
class IterationSpace:
    gen: Generalized
    group: FusionGroup
    reduce: bool                                  # the group reduces: its rows are the kept axes
    orig: tuple[SizeExpr, ...]                    # the group's space as the planner sees it
    orig_concrete: Frame
    orig_axes: tuple[int, ...]                    # reduced axes of `orig`
    orig_outer: tuple[int, ...]
    level: Mapping[str, str]                      # member -> "full" | "reduced" | "inline"
    ranges_identity: bool                         # no member reshapes the space
    ranges: Mapping[Frame, list]                  # frame -> per axis, its (lo, hi) range of refined dims
    rsizes: tuple[int, ...] = ()                  # refined dims: concrete and symbolic sizes, which are reduced
    rsyms: tuple[SizeExpr, ...] = ()
    rreduced: tuple[bool, ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()      # the refined dims each kernel axis merges
    final_of: Mapping[int, int] | None = None     # refined dim -> kernel axis
    shape: tuple[SizeExpr, ...] = ()              # the kernel's axes: their sizes, symbolic and at the traced
    concrete: Frame = ()                          # shapes
    axes: tuple[int, ...] = ()                    # reduced kernel axes
    outer: tuple[int, ...] = ()                   # kept kernel axes (the rows)

    @property
    def big(self) -> bool:
        """Indices past 2^31: the kernel computes them in int64."""
        return prod(self.orig_concrete) >= 2 ** 31 - 1

    @property
    def members(self) -> set[str]:
        return set(self.group.nodes)

    def as_tiles(self) -> IterationSpace:
        """The space walked as [rows, last axis] tiles (a pointwise group iterated like rows of a reduction)."""
        n = len(self.shape)
        return replace(self, axes=(n - 1,), outer=tuple(range(n - 1)))

    # --- views ---------------------------------------------------------------------------------------------
    def frame(self, node: Node) -> Frame:
        """The shape whose row-major order a full-level node's operands are indexed in."""
        return self.orig_concrete if isinstance(node, Reduction) else tuple(node.out.shape)

    def view_exprs(self, node: Node, j: int):
        """Operand j of `node`: its View and its shape, strides and offset as size expressions."""
        v = node.operands[j]
        base = ("node", node.name, "operand", j)
        shape = [self.gen.expr(base + ("shape", k), s) for k, s in enumerate(v.shape)]
        strides = [self.gen.expr(base + ("strides", k), s) for k, s in enumerate(v.strides)]
        return v, shape, strides, self.gen.expr(base + ("offset",), v.offset)

    def frame_view(self, node: Node, j: int, at_level: str):
        """(frame, concrete strides, symbolic strides, offset terms) of operand j of `node`: a full-level
        read in the node's own frame, a row value as a view of the space broadcast along the reduced axes."""
        v, shape, strides, offset = self.view_exprs(node, j)
        if at_level == "full" or not self.reduce:
            frame = self.frame(node)
            if tuple(v.shape) != frame:
                raise CodegenUnsupported(f"{node.name} operand {j} has shape {v.shape}, its frame is {frame}")
            return frame, list(v.strides), list(strides), [offset]
        n = len(self.orig)
        if len(v.shape) == n:                        # keepdim: the view's axes are the space's
            pairs = [(k, k) for k in self.orig_outer]
        elif len(v.shape) == len(self.orig_outer):   # the kept axes only
            pairs = list(zip(range(len(v.shape)), self.orig_outer))
        else:
            raise CodegenUnsupported(f"{node.name} operand {j}: shape {v.shape} does not map onto the rows")
        conc, sym = [0] * n, [const(0)] * n
        for pos, k in pairs:
            if v.strides[pos] == 0 and strides[pos].is_constant:
                continue
            if v.shape[pos] == 1 and shape[pos].is_constant:
                continue
            conc[k], sym[k] = v.strides[pos], strides[pos]
        return self.orig_concrete, conc, sym, [offset]

    def refined(self, frame: Frame, conc: list[int], sym: list[SizeExpr]):
        """Strides over the refined dims of a view indexed in `frame` (a split dim always has strides)."""
        n = len(self.rsizes)
        rc, rs = [0] * n, [const(0)] * n
        for k, (lo, hi) in enumerate(self.ranges[frame]):
            c, s = conc[k], sym[k]
            for m in range(hi - 1, lo - 1, -1):
                rc[m], rs[m] = c, s
                if m > lo:
                    c *= self.rsizes[m]
                    s = product([s, self.rsyms[m]])
                    if s is None:
                        raise CodegenUnsupported("a stride of a reshaped operand is not a product of input dims")
        return rc, rs

    def final(self, frame: Frame, conc, sym) -> tuple[list[int], list[SizeExpr]]:
        """A view's strides over the kernel's (final) axes: each merged axis steps like its innermost
        non-unit refined dim."""
        rc, rs = self.refined(frame, conc, sym)
        fc, fs = [], []
        for g in self.groups:
            inner = next((m for m in reversed(g) if self.rsizes[m] != 1), g[-1])
            fc.append(rc[inner])
            fs.append(rs[inner])
        return fc, fs

    def index_frame(self, node: Node, axis: int) -> tuple[Frame, int]:
        """The frame and axis an Index leaf of `node` (an axis of its own shape) names."""
        if self.level[node.name] != "reduced":
            return self.frame(node), axis
        if len(node.out.shape) == len(self.orig):
            return self.orig_concrete, axis
        return self.orig_concrete, self.orig_outer[axis]

    def index_dims(self, node: Node, axis: int) -> set[int]:
        frame, a = self.index_frame(node, axis)
        return set(range(*self.ranges[frame][a]))

    # --- inline members: a narrowing view of a pointwise producer, recomputed at the reader's index ----------
    def shift(self, reader: Node, j: int, producer: Node) -> dict[int, list[SizeExpr]]:
        """How the producer's coordinates follow the reader's: the same, shifted along at most one axis."""
        _, _, strides, offset = self.view_exprs(reader, j)
        out_syms = [self.gen.expr(("node", producer.name, "out", k), s) for k, s in enumerate(producer.out.shape)]
        return view_shift(reader, j, producer, strides, offset, out_syms)

    def inline_reads(self, producer: Node, frame: Frame, shift):
        """(frame, concrete strides, symbolic strides, indexed axes) of every load an inline recompute makes."""
        idx = {e.axis for e in walk(producer.expr) if isinstance(e, Index)}
        for i, view in enumerate(producer.operands):
            if view.base in self.members:
                inner = self.gen.graph.node(view.base)
                if self.level[inner.name] != "inline":
                    raise CodegenUnsupported(f"inline {producer.name} reads {inner.name} of the group")
                inner_shift = compose(shift, self.shift(producer, i, inner))
                for inner_frame, conc, sym, inner_idx in self.inline_reads(inner, frame, inner_shift):
                    yield inner_frame, conc, sym, inner_idx | idx   # the producer's own Index axes too
                continue
            _, _, strides, _ = self.view_exprs(producer, i)
            yield frame, list(view.strides), list(strides), idx
        if not producer.operands:
            yield frame, [0] * len(frame), [const(0)] * len(frame), idx


def view_shift(reader: Node, j: int, producer: Node, strides: list[SizeExpr], offset: SizeExpr,
               out_syms: list[SizeExpr]) -> dict[int, list[SizeExpr]]:
    """How `producer`'s coordinates follow `reader`'s, which reads it as operand j (symbolic `strides`, `offset`;
    `out_syms`: the producer's shape): the same, shifted along at most one axis (CodegenUnsupported for any view
    but a narrowing at every size)."""
    v = reader.operands[j]
    found = narrowing_shift(v, producer.out.shape) or _shift_in_place(v, producer.out.shape)
    if found is None:
        raise CodegenUnsupported(f"{reader.name} reads {producer.name} through a view that is not a narrowing")
    expected = symbolic_strides(out_syms)
    for k, size in enumerate(v.shape):
        if size > 1 and (expected[k] is None or not same(strides[k], expected[k])):
            raise CodegenUnsupported(f"{reader.name} reads {producer.name} with strides that vary differently")
    axis, _ = found
    if axis < 0:
        if not (offset.is_constant and offset.coeff + offset.offset == 0):
            raise CodegenUnsupported(f"{reader.name} reads {producer.name} at an offset that varies")
        return {}
    step = poly_quotient(offset, expected[axis]) if expected[axis] is not None else None
    if step is None:
        raise CodegenUnsupported(f"{reader.name} reads {producer.name} at an offset that is no product of dims")
    return {axis: [step]}


def _shift_in_place(view, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """(axis, shift) when `view` reads a contiguous buffer of its own `shape` shifted along one axis (a cat's part,
    a roll's slice: the reads past the buffer masked), the axis the one whose stride divides the offset with a shift
    shorter than the axis (with contiguous strides no other axis does); None for any other view."""
    if tuple(view.shape) != tuple(shape) or not view.offset:
        return None
    contiguous = contiguous_strides(shape)
    if any(v > 1 and st != c for v, st, c in zip(view.shape, view.strides, contiguous)):
        return None
    found = [(k, view.offset // c) for k, (n, c) in enumerate(zip(shape, contiguous))
             if n > 1 and view.offset % c == 0 and abs(view.offset // c) < n]
    return found[0] if len(found) == 1 else None


def shifted_inline(level: dict[str, str], nodes: list[Node], outputs: tuple[str, ...]) -> dict[str, str]:
    """`level` with "inline" for each full-size pointwise member that the group reads only at a shift along one of
    its axes through masked loads (the parts of a cat: torch.roll's slices, each dim's read from the one before):
    recomputed where it is read, at the shifted coordinates under the reader's mask, never read back at an offset
    (which codegen cannot index)."""
    level = dict(level)
    for node in reversed(nodes):
        if not isinstance(node, Pointwise) or level[node.name] != "full" or node.name in outputs:
            continue
        reads = [(m, j) for m in nodes for j, v in enumerate(m.operands) if v.base == node.name]
        if reads and all(isinstance(m, Pointwise) and level[m.name] in ("full", "inline")
                         and _shift_in_place(m.operands[j], node.out.shape) is not None
                         and all(e.valid is not None for e in walk(m.expr) if isinstance(e, Load) and e.operand == j)
                         for m, j in reads):
            level[node.name] = "inline"
    return level


def compose(a: dict, b: dict) -> dict:
    """Two shifts, one after the other."""
    out = {k: list(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, []).extend(v)
    return out


# --- making the space ------------------------------------------------------------------------------------

def iteration_space(gen: Generalized, group: FusionGroup) -> IterationSpace:
    """The refined and coalesced space of a pointwise or reduction group (CodegenUnsupported where its
    members' shapes do not nest for every size)."""
    graph = gen.graph
    nodes = [graph.node(n) for n in group.nodes]
    reduce = group.family == "reduction"
    if reduce:   # the space as the planner sees it (before refinement and coalescing)
        red = next(n for n in nodes if isinstance(n, Reduction))
        orig = [gen.expr(("node", red.name, "operand", 0, "shape", k), s) for k, s in enumerate(red.operands[0].shape)]
        orig_concrete = tuple(red.operands[0].shape)
    else:
        first = next((n for n in nodes if n.out.shape == tuple(group.space)), nodes[0])
        orig = [gen.expr(("node", first.name, "out", k), s) for k, s in enumerate(first.out.shape)]
        orig_concrete = tuple(first.out.shape)
    orig_axes = tuple(group.reduce_axes) if reduce else ()
    outer = tuple(k for k in range(len(orig)) if k not in orig_axes)
    level = shifted_inline({n.name: _level(n, group, reduce, orig_concrete, orig_axes,
                                           reduce and _rows_reshaped(gen, n, orig, orig_axes)) for n in nodes},
                           nodes, group.outputs)
    frames = {orig_concrete: orig}
    for node in nodes:
        if level[node.name] == "full" and node.out.shape != orig_concrete and not isinstance(node, Reduction):
            frames.setdefault(tuple(node.out.shape),
                              [gen.expr(("node", node.name, "out", k), s) for k, s in enumerate(node.out.shape)])
    space = IterationSpace(gen, group, reduce, tuple(orig), orig_concrete, orig_axes, outer, level,
                           **_refine(frames, orig, orig_concrete, orig_axes))
    views, barriers, gathers = _addressed_views(space, nodes)
    if gathers and space.ranges_identity is False:
        raise CodegenUnsupported("an indirect load in a group that reshapes its space", _reshaping_reader(space, nodes))
    return _coalesce(space, views, barriers, merge=not gathers)


def _reshaping_reader(space: IterationSpace, nodes: list[Node]) -> str | None:
    """The first member that reads a gathering member through a reshaping view (a roll of a (B, H, W, C) map read as
    (B, H*W, C) rows by a norm): generate cuts the group before it (pipeline._mend), so the gathers are a kernel in
    their own space and the rows read their result from memory. None where no reader reshapes a gather (the whole
    group is then split)."""
    gathering = {n.name for n in nodes if space.level[n.name] != "inline" and _gathers(n)}
    for node in nodes:
        if any(v.base in gathering and tuple(v.shape) != tuple(space.gen.graph.node(v.base).out.shape)
               for v in node.operands):
            return node.name
    return None


def _gathers(node: Node) -> bool:
    """Whether `node` loads through an index (a gather: torch.roll, an embedding's rows)."""
    return any(isinstance(e, Load) and e.gather is not None for e in walk(getattr(node, "expr", Const(0, "i32"))))


def _rows_reshaped(gen: Generalized, node: Node, orig, reduced_axes: tuple[int, ...]) -> bool:
    """Whether `node` holds as many values as the space has rows at every size (its symbolic element count is
    the kept axes'): a reshape of the row values, as `x.pow(2).mean(-1, keepdim=True)` of a 3-d x is after the
    export flattened it to (B*T, 1). The readers' views are checked to be in row order (check_aligned)."""
    kept = [s for k, s in enumerate(orig) if k not in reduced_axes]
    mine = product([gen.expr(("node", node.name, "out", k), s) for k, s in enumerate(node.out.shape)])
    rows = product(kept) if kept else const(1)
    return mine is not None and rows is not None and same(mine, rows)


def _level(node: Node, group: FusionGroup, reduce: bool, space: Frame, reduced_axes: tuple[int, ...],
           rows_reshaped: bool = False) -> str:
    shape = node.out.shape
    if reduce:
        if isinstance(node, Reduction):
            return "reduced"
        if shape == space:
            return "full"
        kept = tuple(s for k, s in enumerate(space) if k not in reduced_axes)
        keepdim = tuple(1 if k in reduced_axes else s for k, s in enumerate(space))
        if shape in (kept, keepdim) or prod(shape) == prod(kept) and prod(kept) == 1:
            return "reduced"
        if rows_reshaped and prod(shape) != prod(space):
            return "reduced"
    elif shape == space:
        return "full"
    if prod(shape) == prod(space):
        return "full"            # a reshape of the space: the same elements in the same order
    if isinstance(node, Pointwise) and node.name not in group.outputs:
        return "inline"          # recomputed where its one consumer reads it (a narrowing view)
    raise CodegenUnsupported(f"node {node.name} of shape {shape} is neither the row space "
                             f"{space} nor its reduction")


def _refine(frames: dict, orig, orig_concrete: Frame, orig_axes: tuple[int, ...]) -> dict:
    """Refined dims (concrete and symbolic sizes), which are reduced, and each frame's dim -> range."""
    shapes = list(frames)
    if len(shapes) == 1:
        return {"ranges_identity": True, "rsizes": tuple(orig_concrete), "rsyms": tuple(orig),
                "ranges": {orig_concrete: [(k, k + 1) for k in range(len(orig))]},
                "rreduced": tuple(k in orig_axes for k in range(len(orig)))}
    bounds: dict[int, SizeExpr] = {}
    for shape, syms in frames.items():
        for c, s in zip(shape, syms):
            if c == 1 and not s.is_constant:
                raise CodegenUnsupported("a reshaped space with an axis of size 1 that varies")
        for k in range(len(shape) + 1):
            c = prod(shape[k:])
            s = product(syms[k:]) if k < len(shape) else const(1)
            if s is None:
                raise CodegenUnsupported("sizes of a reshaped space are not products of input dims")
            if c in bounds and not same(bounds[c], s):
                raise CodegenUnsupported("the reshaped shapes nest only for the traced sizes")
            bounds[c] = s
    ordered = sorted(bounds, reverse=True)
    rsizes, rsyms = [], []
    for a, b in zip(ordered, ordered[1:]):
        q = quotient(bounds[a], bounds[b])
        if a % b or q is None or not is_whole(q):
            raise CodegenUnsupported("the reshaped shapes do not nest for every size")
        rsizes.append(a // b)
        rsyms.append(q)
    index = {c: i for i, c in enumerate(ordered)}
    ranges = {shape: [(index[prod(shape[k:])], index[prod(shape[k + 1:])]) for k in range(len(shape))]
              for shape in shapes}
    rreduced = [False] * len(rsizes)
    for k in orig_axes:
        for m in range(*ranges[orig_concrete][k]):
            rreduced[m] = True
    return {"ranges_identity": False, "rsizes": tuple(rsizes), "rsyms": tuple(rsyms), "ranges": ranges,
            "rreduced": tuple(rreduced)}


def _addressed_views(space: IterationSpace, nodes: list[Node]):
    """Every view the kernel addresses, as (frame, concrete strides, symbolic strides); the refined dims an
    Index (iota, a cat's condition) names, which keep their own coordinate; whether any load gathers."""
    views, barriers = [], set()
    gathers = False
    members = space.members
    for node in nodes:
        level = space.level[node.name]
        if level == "inline":
            continue
        gathers = gathers or _gathers(node)
        for e in walk(getattr(node, "expr", Const(0, "i32"))):
            if isinstance(e, Index):
                barriers |= space.index_dims(node, e.axis)
        for j, view in enumerate(node.operands):
            if view.base in members:
                producer = space.gen.graph.node(view.base)
                if space.level[producer.name] == "inline":
                    shift = space.shift(node, j, producer)
                    for frame, conc, sym, idx in space.inline_reads(producer, space.frame(node), shift):
                        views.append((frame, conc, sym))
                        barriers |= {m for a in idx for m in range(*space.ranges[frame][a])}
                continue
            at = "full" if isinstance(node, Reduction) else level
            frame, conc, sym, _ = space.frame_view(node, j, at)
            views.append((frame, conc, sym))
    return views, barriers, gathers


def _coalesce(space: IterationSpace, views: list, barriers: set[int], merge: bool) -> IterationSpace:
    refined = [space.refined(frame, conc, sym) for frame, conc, sym in views]
    rsizes, rsyms, rreduced = space.rsizes, space.rsyms, space.rreduced
    unit = [c == 1 and s.is_constant for c, s in zip(rsizes, rsyms)]

    def fits(a: int, b: int) -> bool:  # refined dims a < b (non-unit) read as one by every view
        for rc, rs in refined:
            if rc[a] == 0 and rc[b] == 0 and rs[a].is_constant and rs[b].is_constant:
                continue
            inner = product([rs[b], rsyms[b]])
            if rc[a] != rc[b] * rsizes[b] or inner is None or not same(rs[a], inner):
                return False
        return True

    groups: list[list[int]] = []
    last = None   # the last non-unit dim of the open group
    for m in range(len(rsizes)):
        joins = merge and groups and m not in barriers and groups[-1][-1] not in barriers \
            and rreduced[m] == rreduced[groups[-1][-1]] \
            and (unit[m] or last is None or fits(last, m))
        if joins:
            groups[-1].append(m)
        else:
            groups.append([m])
            last = None
        if not unit[m]:
            last = m
    sizes = [product([rsyms[m] for m in g]) for g in groups]
    if any(s is None for s in sizes):
        raise CodegenUnsupported("iteration sizes are not products of input dims")
    axes = tuple(f for f, g in enumerate(groups) if rreduced[g[0]])
    return replace(space, groups=tuple(tuple(g) for g in groups),
                   final_of={m: f for f, g in enumerate(groups) for m in g}, shape=tuple(sizes),
                   concrete=tuple(prod(rsizes[m] for m in g) for g in groups), axes=axes,
                   outer=tuple(f for f in range(len(groups)) if f not in axes))
