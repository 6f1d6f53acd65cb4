"""Triton source for a memory-bound fusion group: a pointwise chain, or reductions with their prologue
and epilogue (softmax, norms, losses), over any set of axes.

Iteration space. The group's space (a pointwise group's output shape, a reduction's input shape) is
first *refined* with the shapes of members that reshape it (GroupNorm's statistics run over
(N, G, C/G·H·W) and its affine over (N, C, H, W): the kernel iterates over (N, G, C/G, H·W)), then
*coalesced*: adjacent axes that every operand reads contiguously (or broadcasts along both) merge into
one, so an index is unravelled over as few sizes as possible. Coordinates are computed only where a
load needs them, each with the fewest divisions (`(x // (H·W)) % C`, not a chain through W and H).

A pointwise group walks its output's elements in row-major order, XBLOCK per program; when some operand
needs coordinates (a broadcast, a slice, a `cat`), it walks [rows, last axis] tiles instead, so only row
indices are divided, once per row. A reduction group walks rows (the kept axes, XBLOCK per program) and,
inside a row, the reduced axes in RBLOCK chunks: tiles are [XBLOCK, RBLOCK]. Persistent schedules
(RBLOCK covers the row) read each input once and keep every value in registers; looped schedules make
one pass per dependent reduction stage plus one for the stores. Two stages fold into one pass: a max and
a sum of exp(x − max) (online softmax), and a sum and a sum of squared deviations from a value derived
from it (a variance: per-lane Welford, combined across lanes with Chan's formula). A looped pass whose
loads index some reduced axes separately (a per-channel weight inside a GroupNorm group) loops over
those axes as scalars around a contiguous inner loop, rather than dividing every element's index.

Every node's value lives in a register variable `v_<node>`; values a node reads from outside the
group are masked `tl.load`s through the operand's View, with sizes and strides as runtime arguments.
A pointwise member that the planner folded in for one consumer reading it through a narrowing view (a
`cat` of `-x[..., d/2:]`) is recomputed at that consumer's index, under the consumer's mask.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Generalized, SizeExpr
from kerntailor.codegen.assemble import assemble, one_dim
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel, Scratch
from kerntailor.codegen.helpers import math_helper
from kerntailor.codegen.render import TL_DTYPES, ExprRenderer, compute_dtype
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import const, is_whole, product, quotient, same
from kerntailor.codegen.writer import KernelWriter
from kerntailor.ir.expr import Const, Index, Load, Op
from kerntailor.ir.nodes import Node, Pointwise, Reduction, exp_of_difference
from kerntailor.ir.types import View, contiguous_strides
from kerntailor.plan.fusion import FusionGroup, narrowing_shift
from kerntailor.units import next_power_of_two

FLOAT_IDENTITY = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")', "prod": "1.0", "any": "0",
                  "all": "1", "argmax": 'float("-inf")', "argmin": 'float("inf")'}   # fp32 accumulators


@dataclass(frozen=True, kw_only=True)
class PointwiseSchedule(Schedule):
    """XBLOCK elements per program, in row-major order; where some load needs coordinates, [rows, last axis]
    tiles of about XBLOCK elements instead (`tiles=False` keeps the flat walk)."""

    family: ClassVar[str] = "pointwise"
    order: ClassVar[tuple[str, ...]] = ("XBLOCK", "num_warps", "num_stages", "waves_per_eu", "tiles")
    shown: ClassVar[tuple[str, ...]] = ("XBLOCK", "num_warps")

    XBLOCK: int = 1024
    tiles: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self.power_of_two("XBLOCK")
        self.one_of("tiles", (True, False))


@dataclass(frozen=True, kw_only=True)
class ReductionSchedule(Schedule):
    """XBLOCK rows per program, RBLOCK elements of a row at a time: the whole row in registers (`persistent`,
    RBLOCK then covers it at run time) or a loop over it; SPLIT > 0 spreads one whole-tensor row over SPLIT
    programs (the search tunes the chunks, never the split)."""

    family: ClassVar[str] = "reduction"
    order: ClassVar[tuple[str, ...]] = ("XBLOCK", "RBLOCK", "SPLIT", "persistent", "num_warps", "num_stages",
                                        "waves_per_eu")
    shown: ClassVar[tuple[str, ...]] = ("XBLOCK", "RBLOCK", "persistent", "num_warps")

    XBLOCK: int
    RBLOCK: int
    persistent: bool
    SPLIT: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.power_of_two("XBLOCK")
        self.power_of_two("RBLOCK")
        self.one_of("persistent", (True, False))
        if self._int("SPLIT"):
            self.power_of_two("SPLIT")

    def retune(self, knobs) -> ReductionSchedule:
        """A split reduction keeps its split and loops over its chunks, whatever the search's knobs say."""
        tuned = super().retune(knobs)
        return replace(tuned, persistent=False) if self.SPLIT else tuned


def default_schedule(gen: Generalized, group: FusionGroup) -> PointwiseSchedule | ReductionSchedule:
    """A reasonable schedule without search: persistent rows up to 32K elements, else 4K chunks; a whole-tensor
    reduction of 64K elements or more split over 512 programs."""
    if group.family == "pointwise":
        return PointwiseSchedule(XBLOCK=1024, num_warps=4)
    r = 1
    for k in group.reduce_axes:
        r *= group.space[k]
    rows = max(1, prod(group.space) // max(r, 1))
    rblock = 1 << max(0, (r - 1).bit_length())
    trailing = group.reduce_axes == tuple(range(len(group.space) - len(group.reduce_axes), len(group.space)))
    if rows == 1 and r >= 1 << 16 and split_possible(gen, group):
        return ReductionSchedule(XBLOCK=1, RBLOCK=2048, SPLIT=512, persistent=False, num_warps=8)
    if not trailing:  # rows are strided across the reduced axes: tile many rows for coalescing
        return ReductionSchedule(XBLOCK=64, RBLOCK=min(rblock, 64), persistent=rblock <= 64, num_warps=8)
    if rblock <= 32768:
        return ReductionSchedule(XBLOCK=1, RBLOCK=rblock, persistent=True, num_warps=max(1, min(16, rblock // 256)))
    return ReductionSchedule(XBLOCK=1, RBLOCK=4096, persistent=False, num_warps=8)


def generate_fused(gen: Generalized, group: FusionGroup, schedule: PointwiseSchedule | ReductionSchedule,
                   host_names: dict, kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for `group` under `schedule`."""
    if group.family not in ("pointwise", "reduction") or schedule.family != group.family:
        raise CodegenUnsupported(f"{group.name} is a {group.family} group, not one for a {schedule.family} schedule")
    writer = _FusedWriter(gen, group, schedule, host_names, kernel_name)
    kernel = writer.write()
    tiles = writer.tile_mode()
    if tiles:
        kernel = _FusedWriter(gen, group, schedule, host_names, kernel_name, tiled=tiles).write()
    return kernel


def split_possible(gen: Generalized, group: FusionGroup) -> bool:
    """Whether `group` can be generated as a split (whole-tensor) reduction."""
    probe = ReductionSchedule(XBLOCK=1, RBLOCK=1, persistent=False)
    try:
        return not _FusedWriter(gen, group, probe, {}, "probe").split_ok()
    except CodegenUnsupported:
        return False


def _walk(expr):
    yield expr
    if isinstance(expr, Op):
        for a in expr.args:
            yield from _walk(a)
    elif isinstance(expr, Load):
        if expr.gather is not None:
            yield from _walk(expr.gather[1])
        if expr.valid is not None:
            yield from _walk(expr.valid)


class _FusedWriter(KernelWriter):
    def __init__(self, gen: Generalized, group: FusionGroup, schedule: Schedule, host_names: dict, name: str,
                 tiled: str = ""):
        super().__init__(gen, group, schedule, host_names, name)
        self.reduce = group.family == "reduction"
        self.tiled = "" if self.reduce else tiled   # "" (flat), "persistent" or "looped" [rows, last axis]
        self.persistent = schedule.persistent if self.reduce else True
        # the group's space as the planner sees it (before refinement and coalescing)
        if self.reduce:
            red = next(n for n in self.nodes if isinstance(n, Reduction))
            self.orig = [self.sizes.slot(("node", red.name, "operand", 0, "shape", k), s)
                         for k, s in enumerate(red.operands[0].shape)]
            self.orig_concrete = tuple(red.operands[0].shape)
        else:
            first = next((n for n in self.nodes if n.out.shape == tuple(group.space)), self.nodes[0])
            self.orig = [self.sizes.slot(("node", first.name, "out", k), s) for k, s in enumerate(first.out.shape)]
            self.orig_concrete = tuple(first.out.shape)
        self.orig_axes = tuple(group.reduce_axes) if self.reduce else ()
        self.orig_outer = [k for k in range(len(self.orig)) if k not in self.orig_axes]
        self.level = {n.name: self._level(n) for n in self.nodes}
        self.big = prod(self.orig_concrete) >= 2 ** 31 - 1
        self._blocks: list[dict] = []     # coordinate blocks: which i<k> each section defines and uses
        self._owner: dict[int, int] = {}  # axis -> the block defining its coordinate now
        self._loops: list[dict] = []      # looped passes, laid out (flat or nested) when the kernel is done
        self.rblock = 1
        self._at_end = False              # whether the last pass laid out ended at the row's end
        self._deferred: list[dict] = []   # loads that are row-shaped if their reduced axes become scalars
        self._scalar_axes: set[int] = set()
        self._offset_info = ("0", set(), False)
        self._build_space()
        if self.tiled:  # [rows, last axis] tiles: a pointwise group iterated like rows of a reduction
            n = len(self.space)
            self.reduce, self.persistent = True, self.tiled == "persistent"
            self.axes, self.outer = (n - 1,), list(range(n - 1))

    # --- levels ------------------------------------------------------------------------------------
    def _level(self, node: Node) -> str:
        shape = node.out.shape
        space = self.orig_concrete
        if self.reduce:
            if isinstance(node, Reduction):
                return "reduced"
            if shape == space:
                return "full"
            kept = tuple(s for k, s in enumerate(space) if k not in self.orig_axes)
            keepdim = tuple(1 if k in self.orig_axes else s for k, s in enumerate(space))
            if shape in (kept, keepdim) or prod(shape) == prod(kept) and prod(kept) == 1:
                return "reduced"
        elif shape == space:
            return "full"
        if prod(shape) == prod(space):
            return "full"            # a reshape of the space: the same elements in the same order
        if isinstance(node, Pointwise) and node.name not in self.group.outputs:
            return "inline"          # recomputed where its one consumer reads it (a narrowing view)
        raise CodegenUnsupported(f"node {node.name} of shape {shape} is neither the row space "
                                 f"{space} nor its reduction")

    def _frame(self, node: Node) -> tuple[int, ...]:
        """The shape whose row-major order a full-level node's operands are indexed in."""
        return self.orig_concrete if isinstance(node, Reduction) else tuple(node.out.shape)

    # --- the iteration space: refine by the members' shapes, then coalesce ------------------------------
    def _build_space(self) -> None:
        frames = {self.orig_concrete: self.orig}
        for node in self.nodes:
            if self.level[node.name] == "full" and node.out.shape != self.orig_concrete \
                    and not isinstance(node, Reduction):
                frames.setdefault(tuple(node.out.shape),
                                  [self.sizes.slot(("node", node.name, "out", k), s)
                                   for k, s in enumerate(node.out.shape)])
        self._refine(frames)
        # every view the kernel addresses, as (frame, concrete strides, symbolic strides), and the refined
        # axes an Index (iota, a cat's condition) names: those keep their own coordinate
        views, barriers = [], set()
        gathers = False
        for node in self.nodes:
            level = self.level[node.name]
            if level == "inline":
                continue
            for e in _walk(getattr(node, "expr", Const(0, "i32"))):
                if isinstance(e, Load) and e.gather is not None:
                    gathers = True
                if isinstance(e, Index):
                    barriers |= self._index_dims(node, e.axis)
            for j, view in enumerate(node.operands):
                if view.base in self.members:
                    producer = self.graph.node(view.base)
                    if self.level[producer.name] == "inline":
                        shift = self._shift(node, j, producer)
                        for frame, conc, sym, idx in self._inline_reads(producer, self._frame(node), shift):
                            views.append((frame, conc, sym))
                            barriers |= {m for a in idx for m in range(*self._ranges[frame][a])}
                    continue
                at = "full" if isinstance(node, Reduction) else level
                frame, conc, sym, _ = self._frame_view(node, j, at)
                views.append((frame, conc, sym))
        if gathers and self._ranges_identity is False:
            raise CodegenUnsupported("an indirect load in a group that reshapes its space")
        self._coalesce(views, barriers, merge=not gathers)

    def _refine(self, frames: dict) -> None:
        """Refined dims (concrete and symbolic sizes), which are reduced, and each frame's dim -> range."""
        shapes = list(frames)
        if len(shapes) == 1:
            self._ranges_identity = True
            self._rsizes = list(self.orig_concrete)
            self._rsyms = list(self.orig)
            self._ranges = {self.orig_concrete: [(k, k + 1) for k in range(len(self.orig))]}
            self._rreduced = [k in self.orig_axes for k in range(len(self.orig))]
            return
        self._ranges_identity = False
        bounds: dict[int, SizeExpr] = {}
        for shape, syms in frames.items():
            for k, (c, s) in enumerate(zip(shape, syms)):
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
        self._rsizes, self._rsyms = [], []
        for a, b in zip(ordered, ordered[1:]):
            q = quotient(bounds[a], bounds[b])
            if a % b or q is None or not is_whole(q):
                raise CodegenUnsupported("the reshaped shapes do not nest for every size")
            self._rsizes.append(a // b)
            self._rsyms.append(q)
        index = {c: i for i, c in enumerate(ordered)}
        self._ranges = {shape: [(index[prod(shape[k:])], index[prod(shape[k + 1:])]) for k in range(len(shape))]
                        for shape in shapes}
        self._rreduced = [False] * len(self._rsizes)
        for k in self.orig_axes:
            for m in range(*self._ranges[self.orig_concrete][k]):
                self._rreduced[m] = True

    def _refined(self, frame: tuple[int, ...], conc: list[int], sym: list[SizeExpr]):
        """Strides over the refined dims of a view indexed in `frame` (a split dim always has strides)."""
        n = len(self._rsizes)
        rc, rs = [0] * n, [const(0)] * n
        for k, (lo, hi) in enumerate(self._ranges[frame]):
            c, s = conc[k], sym[k]
            for m in range(hi - 1, lo - 1, -1):
                rc[m], rs[m] = c, s
                if m > lo:
                    c *= self._rsizes[m]
                    s = product([s, self._rsyms[m]])
                    if s is None:
                        raise CodegenUnsupported("a stride of a reshaped operand is not a product of input dims")
        return rc, rs

    def _coalesce(self, views: list, barriers: set[int], merge: bool) -> None:
        refined = [self._refined(frame, conc, sym) for frame, conc, sym in views]
        unit = [c == 1 and s.is_constant for c, s in zip(self._rsizes, self._rsyms)]

        def fits(a: int, b: int) -> bool:  # refined dims a < b (non-unit) read as one by every view
            for rc, rs in refined:
                if rc[a] == 0 and rc[b] == 0 and rs[a].is_constant and rs[b].is_constant:
                    continue
                inner = product([rs[b], self._rsyms[b]])
                if rc[a] != rc[b] * self._rsizes[b] or inner is None or not same(rs[a], inner):
                    return False
            return True

        groups: list[list[int]] = []
        last = None   # the last non-unit dim of the open group
        for m in range(len(self._rsizes)):
            joins = merge and groups and m not in barriers and groups[-1][-1] not in barriers \
                and self._rreduced[m] == self._rreduced[groups[-1][-1]] \
                and (unit[m] or last is None or fits(last, m))
            if joins:
                groups[-1].append(m)
            else:
                groups.append([m])
                last = None
            if not unit[m]:
                last = m
        self._groups = groups
        self._final_of = {m: f for f, g in enumerate(groups) for m in g}
        self.space = [product([self._rsyms[m] for m in g]) for g in groups]
        if any(s is None for s in self.space):
            raise CodegenUnsupported("iteration sizes are not products of input dims")
        self.space_concrete = tuple(prod(self._rsizes[m] for m in g) for g in groups)
        self.axes = tuple(f for f, g in enumerate(groups) if self._rreduced[g[0]])
        self.outer = [f for f in range(len(groups)) if f not in self.axes]

    def _final(self, frame, conc, sym) -> tuple[list[int], list[SizeExpr]]:
        """A view's strides over the kernel's (final) axes: each merged axis steps like its innermost
        non-unit refined dim."""
        rc, rs = self._refined(frame, conc, sym)
        fc, fs = [], []
        for g in self._groups:
            inner = next((m for m in reversed(g) if self._rsizes[m] != 1), g[-1])
            fc.append(rc[inner])
            fs.append(rs[inner])
        return fc, fs

    def _frame_view(self, node: Node, j: int, at_level: str):
        """(frame, concrete strides, symbolic strides, offset terms) of operand j of `node`: a full-level
        read in the node's own frame, a row value as a view of the space broadcast along the reduced axes."""
        v, shape, strides, offset = super().view_exprs(node, j)
        if at_level == "full" or not self.reduce:
            frame = self._frame(node)
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

    def _index_dims(self, node: Node, axis: int) -> set[int]:
        frame, a = self._index_frame(node, axis)
        return set(range(*self._ranges[frame][a]))

    def _index_frame(self, node: Node, axis: int) -> tuple[tuple[int, ...], int]:
        if self.level[node.name] != "reduced":
            return self._frame(node), axis
        if len(node.out.shape) == len(self.orig):
            return self.orig_concrete, axis
        return self.orig_concrete, self.orig_outer[axis]

    def _frame_coord(self, frame: tuple[int, ...], axis: int) -> str:
        """The coordinate along axis `axis` of `frame`, from the kernel's coordinates."""
        lo, hi = self._ranges[frame][axis]
        if lo == hi:
            return "0"
        finals = sorted({self._final_of[m] for m in range(lo, hi)})
        if any(not set(self._groups[f]) <= set(range(lo, hi)) for f in finals):
            raise CodegenUnsupported("an index along an axis merged with another")
        if len(finals) == 1:
            return self.ci(finals[0])
        terms = []
        for pos, f in enumerate(finals):
            scale = product([self.space[g] for g in finals[pos + 1:]]) if pos + 1 < len(finals) else const(1)
            terms.append(self.ci(f) if scale.is_constant and scale.coeff == 1 else
                         f"{self.ci(f)} * {self.sizes.text(scale)}")
        return "(" + " + ".join(terms) + ")"

    # --- inline members: a narrowing view of a pointwise producer, recomputed at the reader's index ------
    def _shift(self, reader: Node, j: int, producer: Node) -> dict[int, list[SizeExpr]]:
        """How the producer's coordinates follow the reader's: the same, shifted along at most one axis."""
        v = reader.operands[j]
        found = narrowing_shift(v, producer.out.shape)
        if found is None:
            raise CodegenUnsupported(f"{reader.name} reads {producer.name} through a view that is not a narrowing")
        _, shape, strides, offset = super().view_exprs(reader, j)
        out_syms = [self.sizes.slot(("node", producer.name, "out", k), s) for k, s in enumerate(producer.out.shape)]
        expected = self.contiguous_strides(out_syms)
        for k, size in enumerate(v.shape):
            if size > 1 and (expected[k] is None or not same(strides[k], expected[k])):
                raise CodegenUnsupported(f"{reader.name} reads {producer.name} with strides that vary differently")
        axis, _ = found
        if axis < 0:
            if not (offset.is_constant and offset.coeff + offset.offset == 0):
                raise CodegenUnsupported(f"{reader.name} reads {producer.name} at an offset that varies")
            return {}
        step = quotient(offset, expected[axis]) if expected[axis] is not None else None
        if step is None:
            raise CodegenUnsupported(f"{reader.name} reads {producer.name} at an offset that is no product of dims")
        return {axis: [step]}

    def _inline_reads(self, producer: Node, frame, shift):
        """(frame, concrete strides, symbolic strides, indexed axes) of every load an inline recompute makes."""
        idx = {e.axis for e in _walk(producer.expr) if isinstance(e, Index)}
        for i, view in enumerate(producer.operands):
            if view.base in self.members:
                inner = self.graph.node(view.base)
                if self.level[inner.name] != "inline":
                    raise CodegenUnsupported(f"inline {producer.name} reads {inner.name} of the group")
                yield from self._inline_reads(inner, frame, self._compose(shift, self._shift(producer, i, inner)))
                continue
            _, _, strides, _ = super().view_exprs(producer, i)
            yield frame, list(view.strides), list(strides), idx
        if not producer.operands:
            yield frame, [0] * len(frame), [const(0)] * len(frame), idx

    @staticmethod
    def _compose(a: dict, b: dict) -> dict:
        out = {k: list(v) for k, v in a.items()}
        for k, v in b.items():
            out.setdefault(k, []).extend(v)
        return out

    def inline_value(self, producer: Node, reader: Node, j: int, valid: str | None, level: str) -> str:
        frame = self._frame(reader)
        return self._render_inline(producer, frame, self._shift(reader, j, producer), valid, level,
                                   padded=any(a > b for a, b in zip(reader.operands[j].shape, producer.out.shape))
                                   or reader.operands[j].offset != 0)

    def _render_inline(self, node: Node, frame, shift: dict, valid: str | None, level: str, padded: bool) -> str:
        if padded and valid is None:
            raise CodegenUnsupported(f"{node.name} is read past its extent without a mask")

        def index(axis: int) -> str:
            text = self._frame_coord(frame, axis)
            for s in shift.get(axis, []):
                text = f"({text} + {self.sizes.text(s)})"
            return text

        def leaf(load: Load, gather: str | None, lvalid: str | None, i: int) -> str:
            view = node.operands[load.operand]
            masks = [m for m in (valid, lvalid) if m]
            if gather is not None:
                raise CodegenUnsupported(f"an indirect load in {node.name}, recomputed at another index")
            if view.base in self.members:
                inner = self.graph.node(view.base)
                inner_shift = self._compose(shift, self._shift(node, load.operand, inner))
                return "(" + self._render_inline(inner, frame, inner_shift, " & ".join(masks) or None, level,
                                                 padded) + ")"
            _, _, strides, offset = super(_FusedWriter, self).view_exprs(node, load.operand)
            conc, sym = self._final(frame, list(view.strides), list(strides))
            terms = [offset]
            for axis, steps in shift.items():
                for s in steps:
                    term = product([strides[axis], s])
                    if term is None:
                        raise CodegenUnsupported(f"a shifted offset of {node.name} is no product of dims")
                    terms.append(term)
            text_offset = self.offset_text(node, load.operand, level, view=(conc, sym, terms))
            mask = " & ".join([self.mask(level)] + masks)
            dtype = self.graph.buffer_type(view.base).dtype
            text = f"tl.load({self.pointer(view.base)} + ({text_offset}), mask={mask}, other=0)"
            if compute_dtype(dtype) != dtype:
                text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
            return self.cached_load(text)

        renderer = ExprRenderer(leaf, index, self.slot(node))
        text = renderer.render(node.expr)
        self.helpers.update(renderer.helpers)
        return text

    # --- coordinates: defined lazily, only those some load or store uses --------------------------------
    def contiguous_strides(self, shape: list[SizeExpr]) -> list[SizeExpr | None]:
        out = []
        for k in range(len(shape)):
            out.append(product(shape[k + 1:]) if k + 1 < len(shape) else const(1))
        return out

    def ci(self, axis: int) -> str:
        """The coordinate variable of kernel axis `axis` (its definition is emitted because of this use)."""
        block = self._owner.get(axis)
        if block is None:
            raise CodegenUnsupported(f"coordinate of axis {axis} used where it is not defined")
        self._blocks[block]["used"].add(axis)
        return f"i{axis}"

    def index_of(self, node: Node):
        """Renders an Index leaf of `node` (an axis of its own shape) from the kernel's coordinates."""
        return lambda axis: self._frame_coord(*self._index_frame(node, axis))

    def _deferred_load(self, row: str, full: str, axes: set[int]) -> str:
        """A load whose offset moves only with reduced axes `axes`: row-shaped in a pass that loops over
        those axes as scalars, tile-shaped otherwise (decided when the passes are laid out)."""
        key = "\0" + full
        if key not in self.loads:
            name = f"ld{self.load_counter}"
            self.load_counter += 1
            self._deferred.append({"name": name, "row": row, "full": full, "axes": set(axes), "depth": self.out.depth})
            self.out.lines.append(f"\0load{len(self._deferred) - 1}")
            self.loads[key] = name
        return self.loads[key]

    def _coords_block(self, axes: list[int], flat: str) -> int:
        """A placeholder for the unravelling of `flat` (row-major over `axes`) into coordinates."""
        n = len(self._blocks)
        self._blocks.append({"axes": list(axes), "flat": flat, "depth": self.out.depth, "used": set()})
        for k in axes:
            self._owner[k] = n
        self.out.lines.append(f"\0coords{n}")
        return n

    def _unravel(self, axes: list[int], flat: str, used: set[int], depth: int) -> list[str]:
        """Only the coordinates in `used`, each with the fewest divisions: a run of unused inner axes is
        one division by the product of their sizes."""
        pad = "    " * depth
        need = [p for p, k in enumerate(axes) if k in used]
        if not need:
            return []
        if len(axes) == 1:
            return [f"{pad}i{axes[0]} = {flat}"]
        lines, rest, pending = [], flat, []
        for pos in range(len(axes) - 1, min(need) - 1, -1):
            k = axes[pos]
            if pos not in need:
                pending.append(self.space[k])
                continue
            if pending:
                div = self.sizes.text(product(pending))
                if pos == 0:
                    lines.append(f"i{k} = {rest} // {div}")
                    break
                lines.append(f"q{k} = {rest} // {div}")
                rest = f"q{k}"
            if pos == 0:
                lines.append(f"i{k} = {rest}")
            else:
                lines.append(f"i{k} = {rest} % {self.sizes.text(self.space[k])}")
                pending = [self.space[k]]
        return [pad + line for line in lines]

    def _open_loop(self, rnumel: SizeExpr) -> tuple[int, dict]:
        """A pass over the row in RBLOCK chunks; laid out when the kernel is done (flat, or nested when its
        loads index some reduced axes separately)."""
        n = len(self._loops)
        self._loops.append({"depth": self.out.depth, "rnumel": rnumel, "flat_only": False, "ordered": False})
        self.out.lines.append(f"\0loop{n}")
        self.out.depth += 1
        saved, self.loads = self.loads, {}
        self._loops[n]["block"] = self._coords_block(list(self.axes), "rindex")
        return n, saved

    def _close_loop(self, n: int, saved: dict) -> None:
        self.out.depth -= 1
        self.out.lines.append(f"\0endloop{n}")
        self.loads = saved

    def _expand(self, lines: list[str]) -> list[str]:
        out, i = [], 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("\0loop"):
                n = int(line[5:])
                end = lines.index(f"\0endloop{n}", i + 1)
                out += self._expand_loop(n, lines[i + 1:end])
                i = end + 1
                continue
            if line.startswith("\0coords"):
                b = self._blocks[int(line[7:])]
                out += self._unravel(b["axes"], b["flat"], b["used"], b["depth"])
            elif line.startswith("\0load"):
                d = self._deferred[int(line[5:])]
                text = d["row"] if d["axes"] <= self._scalar_axes else d["full"]
                out.append("    " * d["depth"] + f"{d['name']} = {text}")
            else:
                out.append(line)
            i += 1
        return out

    def _nest_at(self, loop: dict) -> int | None:
        """Position in the reduced axes up to which a pass loops over scalar coordinates, or None (flat)."""
        used = self._blocks[loop["block"]]["used"]
        if loop["flat_only"] or len(self.axes) < 2:
            return None
        positions = [p for p, k in enumerate(self.axes) if k in used]
        if not positions or max(positions) == len(self.axes) - 1:
            return None
        p = max(positions)
        inner = prod(self.space_concrete[k] for k in self.axes[p + 1:])
        waste = -(-inner // self.rblock) * self.rblock / inner
        return p if waste <= 1.125 else None

    def _expand_loop(self, n: int, body: list[str]) -> list[str]:
        """A pass over the row. Passes alternate direction where the order of the elements does not matter
        (not Welford's counts, not argmax's first index): a pass that follows one ending at the row's end
        walks backwards, so it starts on the chunks read last, which L2 most likely still holds."""
        loop = self._loops[n]
        pad = "    " * loop["depth"]
        rnumel = self.sizes.text(loop["rnumel"])
        reverse = self._at_end and not loop["ordered"] and not loop["flat_only"]
        self._at_end = not reverse
        p = self._nest_at(loop)

        def chunks(size: str, indent: str) -> list[str]:
            if not reverse:
                return [f"{indent}for roffset in range(0, {size}, RBLOCK):"]
            return [f"{indent}rlast = ({size} - 1) // RBLOCK * RBLOCK"
                    "  # backwards: first the chunks the previous pass read last (likely in L2)",
                    f"{indent}for rstep in range(0, {size}, RBLOCK):",
                    f"{indent}    roffset = rlast - rstep"]

        if p is None:
            return chunks(rnumel, pad) + [
                f"{pad}    rindex = roffset + tl.arange(0, RBLOCK)[None, :]  # within the row, (1, RBLOCK)",
                f"{pad}    rmask = rindex < {rnumel}"] + self._expand(body)
        block = self._blocks[loop["block"]]
        outer, inner = list(self.axes[:p + 1]), list(self.axes[p + 1:])
        f = self.sizes.text(product([self.space[k] for k in inner]))
        count = self.sizes.text(product([self.space[k] for k in outer]))
        note = "  # reduced axes that loads index separately: scalars"
        if reverse:
            head = [f"{pad}for rqq in range(0, {count}):{note}", f"{pad}    rq = {count} - 1 - rqq"]
        else:
            head = [f"{pad}for rq in range(0, {count}):{note}"]
        head += self._unravel(outer, "rq", block["used"], loop["depth"] + 1)
        head += chunks(f, pad + "    ") + [
            f"{pad}        rinner = roffset + tl.arange(0, RBLOCK)[None, :]  # contiguous in every operand",
            f"{pad}        rmask = rinner < {f}",
            f"{pad}        rindex = rq * {f} + rinner  # within the row, (1, RBLOCK)"]
        saved, self._scalar_axes = self._scalar_axes, set(outer)
        rest = self._expand([line for line in body if line != f"\0coords{loop['block']}"])
        self._scalar_axes = saved
        return head + ["    " + line for line in rest]

    # --- index text --------------------------------------------------------------------------------
    def view_exprs(self, node: Node, j: int, at_level: str = "full"):
        """Operand j of `node` over the kernel's axes: (View, shape, strides, offset terms)."""
        frame, conc, sym, offset = self._frame_view(node, j, at_level)
        fc, fs = self._final(frame, conc, sym)
        view = View(node.operands[j].base, self.space_concrete, tuple(fc), node.operands[j].offset)
        return view, list(self.space), fs, offset

    def _trailing(self) -> bool:
        return self.axes == tuple(range(len(self.space) - len(self.axes), len(self.space)))

    def offset_text(self, node: Node, j: int, at_level: str, gathered: dict[int, str] | None = None,
                    view=None) -> str:
        """Element offset of operand j of `node` at the current tile position (or, with `gathered`, at
        the position whose coordinate along an axis is the given expression). `view` overrides the
        operand: (concrete strides, strides, offset terms) over the kernel's axes."""
        if view is not None:
            conc, strides, offsets = view
        else:
            v, _, strides, offsets = self.view_exprs(node, j, "full" if isinstance(node, Reduction) else at_level)
            conc = list(v.strides)
        full = at_level == "full" or not self.reduce
        coord = (lambda k: f"({gathered[k]})" if k in gathered else self.ci(k)) if gathered else self.ci
        axes = list(range(len(self.space))) if full else list(self.outer)
        terms, has_outer, used, rindex = [], False, set(), False
        if full and not gathered:
            # fast paths: the reduced part (or the whole tile) is contiguous
            if not self.reduce and self._contiguous(strides, range(len(self.space))):
                terms, axes, has_outer = ["xindex"], [], True
            elif self.reduce and self._trailing() and self._contiguous(strides, self.axes):
                rindex = True
                if len(self.outer) > 1 and self._contiguous(strides, range(len(self.space))):
                    terms, axes, has_outer = [f"xindex * {self.sizes.text(self._reduced_size())} + rindex"], [], True
                else:
                    terms, axes = ["rindex"], list(self.outer)
        for k in axes:
            if conc[k] == 0 and strides[k].is_constant:
                continue
            if self.space_concrete[k] == 1 and self.space[k].is_constant:
                continue
            terms.append(f"{coord(k)} * {self.sizes.text(strides[k])}")
            has_outer = has_outer or k in self.outer
            used.add(k)
        varying = bool(terms)
        for offset in offsets:
            if not offset.is_constant or offset.coeff + offset.offset != 0:
                terms.append(self.sizes.text(offset))
        text = " + ".join(terms) or "0"
        # what a row load needs to know: the offset alone, and whether it moves along the reduced axes
        self._offset_info = (text, used, rindex or bool(gathered))
        if not varying or (self.reduce and at_level == "full" and not gathered and not has_outer):
            # a pointer block must have the mask's shape: broadcast an offset that lacks some axes
            text = f"{text} + tl.zeros({self._tile(at_level, gathered)}, tl.int32)"
        return text

    def _tile(self, level: str, gathered) -> str:
        if not self.reduce:
            return "[XBLOCK]"
        return "[XBLOCK, RBLOCK]" if level == "full" and not gathered else "[XBLOCK, 1]"

    def _contiguous(self, strides: list[SizeExpr], axes) -> bool:
        axes = list(axes)
        sub = [self.space[k] for k in axes]
        expected = self.contiguous_strides(sub)
        return all(e is not None and (same(strides[k], e) or (self.space_concrete[k] == 1))
                   for k, e in zip(axes, expected))

    def store_offset(self, node: Node) -> str:
        if self.level[node.name] == "reduced":
            return "xindex"
        if not self.reduce:
            return "xindex"
        if self._trailing():
            r = self.sizes.text(product([self.space[k] for k in self.axes]) or const(0))
            return f"xindex * {r} + rindex"
        strides = self.contiguous_strides(self.space)
        if any(s is None for s in strides):
            raise CodegenUnsupported("output strides are not monomials")
        return " + ".join(f"{self.ci(k)} * {self.sizes.text(s)}" for k, s in enumerate(strides))

    # --- values ------------------------------------------------------------------------------------
    def mask(self, level: str) -> str:
        if not self.reduce:
            return "xmask"
        return "xmask & rmask" if level == "full" else "xmask"

    def renderer(self, node: Node, level: str) -> ExprRenderer:
        return ExprRenderer(self.leaf(node, level), self.index_of(node), self.slot(node))

    def leaf(self, node: Node, level: str):
        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                producer = self.graph.node(view.base)
                if self.level[producer.name] == "inline":
                    if gather is not None:
                        raise CodegenUnsupported(f"{node.name} gathers from a recomputed {producer.name}")
                    return f"({self.inline_value(producer, node, load.operand, valid, level)})"
                if gather is not None and self.level[producer.name] == "full" and level == "reduced":
                    return f"({self.gathered(producer, load.gather[0], gather)})"
                self._check_aligned(node, load.operand)
                return f"v_{view.base}"
            dtype = self.graph.buffer_type(view.base).dtype
            offset = self.offset_text(node, load.operand, level)
            bare, used, moves = self._offset_info
            if gather is not None:
                stride = self.sizes.text(self.sizes.slot(("node", node.name, "gather", i), load.gather[0]))
                offset = f"{offset} + ({gather}).to(tl.int64) * {stride}"
            mask = self.mask(level)
            if valid is not None:
                mask = f"{mask} & {valid}"
            cdt = compute_dtype(dtype)
            cast = f".to({TL_DTYPES[cdt]})" if cdt != dtype else ""
            text = f"tl.load({self.pointer(view.base)} + ({offset}), mask={mask}, other=0){cast}"
            if self.reduce and level == "full" and gather is None and valid is None and not moves:
                # the same element along the whole row chunk (a per-channel weight): one load per row, an
                # (XBLOCK, 1) value that broadcasts, not a tile-shaped load in a layout of its own
                row = f"tl.load({self.pointer(view.base)} + ({bare}), mask=xmask, other=0){cast}"
                reduced = used & set(self.axes)
                if not reduced:
                    return self.cached_load(row)
                return self._deferred_load(row, text, reduced)   # row-shaped where those axes are scalars
            return self.cached_load(text)
        return render

    def gathered(self, node: Node, stride: int, index: str) -> str:
        """The value of full-row member `node` at one position per row, chosen by `index` (its buffer's
        element stride `stride` picks the axis): cross-entropy's logp[target], recomputed, not stored."""
        if isinstance(node, Reduction) or len(self.axes) != 1 or not self._ranges_identity \
                or len(self.space) != len(self.orig):
            raise CodegenUnsupported(f"gather from {node.name}")
        axis = self.axes[0]
        if contiguous_strides(tuple(self.space_concrete))[axis] != stride:
            raise CodegenUnsupported(f"gather from {node.name} along a kept axis")

        def leaf(load: Load, gather: str | None, valid: str | None, i: int) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                producer = self.graph.node(view.base)
                if self.level[producer.name] == "reduced":
                    return f"v_{producer.name}"
                if self.level[producer.name] == "inline":
                    raise CodegenUnsupported(f"gather through a recomputed {producer.name}")
                self._check_aligned(node, load.operand)
                return f"({self.gathered(producer, stride, index)})"
            if gather is not None or valid is not None:
                raise CodegenUnsupported(f"nested indirect load in {node.name}")
            dtype = self.graph.buffer_type(view.base).dtype
            offset = self.offset_text(node, load.operand, "full", gathered={axis: index})
            text = f"tl.load({self.pointer(view.base)} + ({offset}), mask=xmask, other=0)"
            if compute_dtype(dtype) != dtype:
                text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
            return self.cached_load(text)

        index_of = self.index_of(node)
        renderer = ExprRenderer(leaf, lambda a: f"({index})" if a == axis else index_of(a), self.slot(node))
        text = renderer.render(node.expr)
        self.helpers.update(renderer.helpers)
        return text

    def _check_aligned(self, node: Node, j: int) -> None:
        view = node.operands[j]
        producer = self.graph.node(view.base)
        # a reduction reads its input at full level, row by row
        mine = "full" if isinstance(node, Reduction) else self.level[node.name]
        theirs = self.level[producer.name]
        if mine == theirs:
            if view.shape != producer.out.shape and prod(view.shape) != prod(producer.out.shape):
                raise CodegenUnsupported(f"{node.name} reads {producer.name} through a reshaping view")
            if tuple(view.strides) != contiguous_strides(tuple(view.shape)) and not _unit_dims_only(view, producer):
                raise CodegenUnsupported(f"{node.name} reads {producer.name} through a permuting view")
            if view.offset:
                raise CodegenUnsupported(f"{node.name} reads {producer.name} at an offset")
            return
        if theirs == "reduced" and mine == "full":
            # a row value: stride 0 along the reduced axes, and the rows in their own order
            frame = self._frame(node)
            if tuple(view.shape) != frame:
                raise CodegenUnsupported(f"{node.name} operand {j} has shape {view.shape}, its frame is {frame}")
            fc, _ = self._final(frame, list(view.strides), [const(0)] * len(frame))
            if any(fc[k] != 0 for k in self.axes if self.space_concrete[k] != 1):
                raise CodegenUnsupported(f"{node.name} reads row value {producer.name} along the reduced axes")
            expected = contiguous_strides(tuple(self.space_concrete[k] for k in self.outer))
            if any(fc[k] != e for k, e in zip(self.outer, expected) if self.space_concrete[k] != 1):
                raise CodegenUnsupported(f"{node.name} reads row value {producer.name} out of row order")
            return
        raise CodegenUnsupported(f"{node.name} (per row) reads a full-row value {producer.name} of the group")

    def _member(self, view: View, level: str) -> Node | None:
        """The pointwise member `view` reads as it is (same shape, contiguous), at `level`; else None."""
        if view.base not in self.members:
            return None
        node = self.graph.node(view.base)
        if not isinstance(node, Pointwise) or self.level[node.name] != level or view.offset \
                or view.shape != node.out.shape or tuple(view.strides) != contiguous_strides(tuple(view.shape)):
            return None
        return node

    def _softplus_of(self, node: Node) -> tuple[Node, int] | None:
        """For tanh(softplus(x)), softplus(x) = log1p(exp(x)) or where(x > T, x, log1p(exp(x))) with T >= 10
        (tanh is 1.0 in fp32 past 10 either way): the exp node and the operand that reads x. Else None."""
        def plain(e, op: str, arity: int = 1) -> bool:
            return _is_op(e, op) and all(isinstance(a, Load) and a.gather is None and a.valid is None
                                         for a in e.args[:arity])

        level = self.level[node.name]
        if not isinstance(node, Pointwise) or not plain(node.expr, "tanh"):
            return None
        sp = self._member(node.operands[node.expr.args[0].operand], level)
        if sp is None:
            return None
        x_view = None
        if plain(sp.expr, "where", 3):
            c, a, b = (sp.operands[x.operand] for x in sp.expr.args)
            cond = self._member(c, level)
            if cond is None or not plain(cond.expr, "gt") or not isinstance(cond.expr.args[1], Const) \
                    or cond.operands[cond.expr.args[0].operand] != a:
                return None
            threshold = self.sizes.slot(("node", cond.name, "const", 2), cond.expr.args[1].value)
            if not threshold.is_constant or not float(cond.expr.args[1].value) >= 10.0:
                return None
            x_view, sp = a, self._member(b, level)
            if sp is None:
                return None
        if not plain(sp.expr, "log1p"):
            return None
        ex = self._member(sp.operands[sp.expr.args[0].operand], level)
        if ex is None or not plain(ex.expr, "exp"):
            return None
        j = ex.expr.args[0].operand
        if x_view is not None and ex.operands[j] != x_view:
            return None
        return ex, j

    def _live(self) -> set[str]:
        """The members some output needs (tanh(softplus(x)) needs only x's producer)."""
        live: set[str] = set()
        stack = [n.name for n in self._outputs()]
        while stack:
            name = stack.pop()
            if name in live or name not in self.members:
                continue
            live.add(name)
            node = self.graph.node(name)
            softplus = self._softplus_of(node) if self.level.get(name) != "inline" else None
            if softplus is not None:
                stack.append(softplus[0].operands[softplus[1]].base)
            else:
                stack += [op.base for op in node.operands]
        return live

    def compute(self, node: Node, done: set[str]) -> None:
        """Emit v_<node> for a pointwise node and, first, any member it needs that is not done."""
        if node.name in done or self.level[node.name] == "inline":
            return
        softplus = self._softplus_of(node)
        for op in (node.operands if softplus is None else [softplus[0].operands[softplus[1]]]):
            if op.base in self.members and op.base not in done:
                producer = self.graph.node(op.base)
                if self.level[producer.name] == "inline":
                    continue  # recomputed where it is read
                if self.level[node.name] == "reduced" and self.level[producer.name] == "full":
                    continue  # read one element per row through a gather, recomputed there
                if isinstance(producer, Reduction):
                    raise CodegenUnsupported(f"{node.name} needs {producer.name} before it is reduced")
                self.compute(producer, done)
        level = self.level[node.name]
        softplus = self._softplus_of(node)
        if softplus is not None:  # tanh(softplus(x)) from one exp (Mish): see codegen/helpers/math.py
            producer, j = softplus
            x = self.leaf(producer, level)(Load(j, self.graph.buffer_type(producer.operands[j].base).dtype))
            self.helpers.add("tanh_softplus")
            text = f"_tanh_softplus({x})"
        else:
            renderer = self.renderer(node, level)
            text = renderer.render(node.expr)
            self.helpers.update(renderer.helpers)
        # the shape in the comment is symbolic too: no size of one variant appears in the kernel text
        shape = ", ".join(self.sizes.host(self.sizes.slot(("node", node.name, "out", k), s))
                          for k, s in enumerate(node.out.shape))
        self.out(f"v_{node.name} = {text}  # {node.origin}, {node.out.dtype}[{shape}]")
        done.add(node.name)

    # --- the kernel --------------------------------------------------------------------------------
    def tile_mode(self) -> str:
        """For a flat pointwise kernel that divides element indices (some load needs coordinates): walk
        [rows, last axis] tiles instead, which divide row indices once per row. "persistent": a row fits a
        power-of-two block with little waste; "looped": long rows, in XBLOCK chunks, when there are rows
        enough for the programs; "" keeps the flat kernel."""
        if self.reduce or self.tiled or len(self.space) < 2 or not self.schedule.tiles:
            return ""
        if not any(b["used"] for b in self._blocks):
            return ""
        last = self.space_concrete[-1]
        rows = prod(self.space_concrete[:-1])
        block = next_power_of_two(last)
        if 8 <= last and block <= 8192 and last / block >= 0.75:
            return "persistent"
        if last >= self.schedule.XBLOCK and rows >= 1024:
            return "looped"
        return ""

    def write(self) -> GeneratedKernel:
        reduction = isinstance(self.schedule, ReductionSchedule)   # (a tiled pointwise group walks rows too)
        xblock = self.schedule.XBLOCK
        rblock = self.schedule.RBLOCK if reduction else 1
        if self.tiled == "persistent":   # XBLOCK counts elements per program: that many / RBLOCK rows
            rblock = next_power_of_two(self.space_concrete[-1])
            xblock = max(1, xblock // rblock)
        elif self.tiled:                   # one row per program, XBLOCK elements per chunk
            rblock, xblock = xblock, 1
        self.rblock = rblock
        rows = product([self.space[k] for k in self.outer]) if self.reduce else product(self.space)
        if rows is None:
            raise CodegenUnsupported("iteration sizes are not products of input dims")
        xnumel = self.sizes.text(rows)
        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        split = self.schedule.SPLIT if reduction else 0
        if split:
            return self._write_split(split, rblock, rows)
        if self.reduce:
            self.out(f"xindex = ({pid} * XBLOCK + tl.arange(0, XBLOCK))[:, None]  # rows, (XBLOCK, 1)")
        else:
            self.out(f"xindex = {pid} * XBLOCK + tl.arange(0, XBLOCK)")
        self.out(f"xmask = xindex < {xnumel}")
        if self.reduce:
            self._coords_block(list(self.outer), "xindex")
            if self.tiled:
                if self.persistent:
                    self._emit_rindex("0", self.sizes.text(self._reduced_size()))
                else:
                    n, saved = self._open_loop(self._reduced_size())
                done: set[str] = set()
                live = self._live()
                for node in self.nodes:
                    if node.name in live:
                        self.compute(node, done)
                self._store_outputs("full", done)
                if not self.persistent:
                    self._close_loop(n, saved)
            else:
                self._write_reduction(rblock)
        else:
            self._coords_block(list(range(len(self.space))), "xindex")
            done = set()
            live = self._live()
            for node in self.nodes:
                if node.name in live:
                    self.compute(node, done)
            self._store_outputs("full", done)
        return self._finish(xblock, rblock, rows)

    def split_ok(self) -> str:
        """Why this group cannot use a split reduction ("" if it can): one row, one stage, no row output."""
        if not self.reduce or prod(self.space_concrete[k] for k in self.outer) != 1:
            return "split reductions are for a whole-tensor reduction"
        reductions = [n for n in self.nodes if isinstance(n, Reduction)]
        if any(r.op not in ("sum", "max", "min") for r in reductions):
            return "split reductions combine sum, max and min only"
        if len({self._acc_dtype(r) for r in reductions}) > 1:
            return "split reductions keep their partials in one dtype: integer and float reductions mixed"
        if max(self._stages(reductions).values()) > 0:
            return "split reductions need independent reductions (one pass)"
        if any(self.level[n.name] == "full" for n in self._outputs()):
            return "split reductions write per-row results only"
        return ""

    def _write_split(self, split: int, rblock: int, rows: SizeExpr) -> GeneratedKernel:
        """A whole-tensor reduction over SPLIT programs: each reduces a chunk and stores its partial; the
        last to finish (an atomic counter) combines the partials in a fixed order and runs the epilogue.
        Deterministic: the combine order does not depend on which program finishes last."""
        why = self.split_ok()
        if why:
            raise CodegenUnsupported(why)
        rnumel = self.sizes.text(self._reduced_size())
        reductions = [n for n in self.nodes if isinstance(n, Reduction)]
        self.out("pid = tl.program_id(0)")
        self.out("xindex = tl.zeros([XBLOCK, 1], tl.int32)  # the one row")
        self.out("xmask = xindex < 1")
        self._coords_block(list(self.outer), "xindex")
        self.out(f"chunk = tl.cdiv(tl.cdiv({rnumel}, SPLIT), RBLOCK) * RBLOCK")
        self.out("start = pid * chunk")
        done: set[str] = set()
        self._compute_ready_reduced(done)
        for r in reductions:
            self._init_accumulator(r)
        self.out("for roffset in range(0, chunk, RBLOCK):")
        self.out.depth += 1
        outer_loads, self.loads = self.loads, {}
        self.out("rindex = start + roffset + tl.arange(0, RBLOCK)[None, :]")
        self.out(f"rmask = rindex < {rnumel}")
        self._coords_block(list(self.axes), "rindex")
        loop_done = {n for n in done if self.level[n] == "reduced"}
        for r in reductions:
            self._accumulate(r, loop_done)
        self.loads = outer_loads
        self.out.depth -= 1
        for k, r in enumerate(reductions):
            self._finish_accumulator(r)
            self.out(f"tl.store(partials_ptr + {k} * SPLIT + pid + xindex, v_{r.name})")
        self.out('count = tl.atomic_add(counter_ptr, 1, sem="acq_rel")')
        self.out("if count == SPLIT - 1:  # the last program: combine the partials in order, then the epilogue")
        self.out.depth += 1
        self.out("lanes = tl.arange(0, SPLIT)[None, :]")
        for k, r in enumerate(reductions):
            fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[r.op]
            self.out(f"p_{r.name} = tl.load(partials_ptr + {k} * SPLIT + lanes + xindex, volatile=True)")
            self.out(f"v_{r.name} = {fn}(p_{r.name}, axis=1, keep_dims=True)  # {r.describe()}")
            done.add(r.name)
        self._compute_ready_reduced(done)
        self._store_outputs("reduced", done)
        self.out.depth -= 1
        # partials in the accumulator's dtype: an integer sum stays exact (fp32 partials would round it)
        partials = "i64" if self._acc_dtype(reductions[0]) == "tl.int64" else "fp32"
        scratch = (Scratch("partials", partials, ((const(len(reductions) * split), 1),)),
                   Scratch("counter", "i32", ((const(1), 1),)))
        self.pointer("partials")
        self.pointer("counter")
        return self._finish(1, rblock, rows, split, scratch)

    def _reduced_size(self) -> SizeExpr:
        r = product([self.space[k] for k in self.axes])
        if r is None:
            raise CodegenUnsupported("reduced size is not a product of input dims")
        return r

    def _write_reduction(self, rblock: int) -> None:
        rsize = self._reduced_size()
        rnumel = self.sizes.text(rsize)
        reductions = [n for n in self.nodes if isinstance(n, Reduction)]
        stage = self._stages(reductions)
        online = {} if self.persistent else self._online_pairs(reductions)
        welford = {} if self.persistent else self._welford_pairs(reductions, stage)
        for m, s_node in online.items():
            stage[s_node.name] = stage[m]
        for s1, (s2, _) in welford.items():
            stage[s2.name] = stage[s1]
        partners = {s_node.name for s_node in online.values()} | {s2.name for s2, _ in welford.values()}
        done: set[str] = set()
        self._compute_ready_reduced(done)
        if self.persistent:
            self._emit_rindex("0", rnumel)
        for s in sorted(set(stage.values())):
            group = [r for r in reductions if stage[r.name] == s]
            if self.persistent:
                for r in group:
                    self._reduce_persistent(r, done)
            else:
                for r in group:
                    if r.name in online:
                        self._init_online(r, online[r.name])
                    elif r.name in welford:
                        self._init_welford(r)
                    elif r.name not in partners:
                        self._init_accumulator(r)
                n, saved = self._open_loop(rsize)
                loop_done = {n for n in done if self.level[n] == "reduced"}
                for r in group:
                    if r.name in partners:
                        continue
                    if r.name in online:
                        self._accumulate_online(r, online[r.name], loop_done)
                    elif r.name in welford:
                        self._accumulate_welford(r, loop_done)
                        self._loops[n]["flat_only"] = True   # every lane's count is the chunk number
                    else:
                        self._accumulate(r, loop_done)
                self._close_loop(n, saved)
                for r in group:
                    if r.name in partners:
                        continue
                    if r.name in online:
                        self._finish_online(r, online[r.name])
                        done.add(online[r.name].name)
                    elif r.name in welford:
                        self._finish_welford(r, *welford[r.name], done)
                    else:
                        self._finish_accumulator(r)
                    done.add(r.name)
            self._compute_ready_reduced(done)
        self._store_outputs("reduced", done)
        full_outputs = [n for n in self._outputs() if self.level[n.name] == "full"]
        if full_outputs:
            if self.persistent:
                self._store_outputs("full", done)
            else:
                n, saved = self._open_loop(rsize)
                self._store_outputs("full", {n for n in done if self.level[n] == "reduced"})
                self._close_loop(n, saved)

    def _contraction_hazard(self) -> bool:
        """Whether this kernel must be compiled without FMA contraction: it makes more than one pass over
        a row, and a product (x·s) feeds a row max or min. The first pass rounds x·s for the max; the next
        recomputes it inside exp(x·s − max), where the compiler may contract it to fma(x, s, −max) and
        keep the product unrounded. The two then disagree by |x·s|·2⁻²⁴, which exp turns into a relative
        error: 8.7e-4 on decode_attention's outlier draw (H200, 2026-12-01; the referee caught it). Only
        there: off, cross_entropy bf16 ran 2-5 % slower on one H200 with nothing to protect (A/B,
        benchmarks/data/cross_entropy_fma_ab_h200_2026-12-01.json)."""
        if not self.reduce or self.persistent:
            return False
        shifts = [n for n in self.nodes if isinstance(n, Reduction) and n.op in ("max", "min")]
        feeding = self.graph.upstream([op.base for r in shifts for op in r.operands], self.members,
                                      through=lambda node: not isinstance(node, Reduction))
        return any(isinstance(n, Pointwise) and _has_op(n.expr, ("mul", "div")) for n in feeding)

    def _online_pairs(self, reductions: list[Reduction]) -> dict[str, Reduction]:
        """max M and sum S = Σ exp(x − M) over the same x: computed in one pass (online softmax)."""
        pairs = {}
        for s_node in reductions:
            if s_node.op != "sum" or s_node.operands[0].base not in self.members:
                continue
            found = exp_of_difference(self.graph, s_node.operands[0].base)
            if found is None or found[0] not in self.members:
                continue
            _, x, shift = found
            m = next((r for r in reductions if r.name == shift.base), None)
            if m is None or m.op != "max" or m.axes != s_node.axes or x != m.operands[0]:
                continue
            pairs[m.name] = s_node
        return pairs

    def _welford_pairs(self, reductions: list[Reduction], stage: dict[str, int]) -> dict[str, tuple]:
        """S = Σ x and Q = Σ (x − m)², m a row value derived from S (and earlier stages): one pass of
        Welford's (mean, M2) per lane gives both, Q = M2 + n·(mean − m)² (a variance never reads x twice)."""
        pairs: dict[str, tuple] = {}
        for q in reductions:
            if q.op != "sum" or q.operands[0].base not in self.members:
                continue
            sq = self.graph.node(q.operands[0].base)
            d_name = _squared(sq)
            if d_name is None or d_name not in self.members or self.level[sq.name] != "full":
                continue
            d = self.graph.node(d_name)
            if not (isinstance(d, Pointwise) and len(d.operands) == 2 and self.level[d.name] == "full"
                    and d.expr == Op("sub", (Load(0, d.expr.args[0].dtype), Load(1, d.expr.args[1].dtype)),
                                     d.expr.dtype)):
                continue
            x_view, m_view = d.operands
            m_name = m_view.base
            if m_name not in self.members or self.level[m_name] != "reduced":
                continue
            s = next((r for r in reductions if r is not q and r.op == "sum" and r.operands[0] == x_view
                      and r.axes == q.axes), None)
            if s is None or s.name in pairs or self._acc_dtype(s) != "tl.float32" \
                    or d.expr.dtype not in ("fp32", "bf16", "fp16"):
                continue
            deps = self._reductions_before(m_name)
            if s.name not in deps or any(stage[r] >= stage[s.name] for r in deps if r != s.name):
                continue
            pairs[s.name] = (q, m_name)
        return pairs

    def _reductions_before(self, name: str) -> set[str]:
        """The group's reductions that member `name` depends on."""
        return {n.name for n in self.graph.upstream([name], self.members) if isinstance(n, Reduction)}

    def _init_welford(self, s: Reduction) -> None:
        self.out(f"mean_{s.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # per lane: running mean")
        self.out(f"m2_{s.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # and sum of squared deviations")

    def _accumulate_welford(self, s: Reduction, done: set[str]) -> None:
        x = self._reduce_operand(s, done)
        mean, m2 = f"mean_{s.name}", f"m2_{s.name}"
        self.out(f"w_{s.name} = tl.where(xmask & rmask, {x}, {mean})")
        self.out(f"d_{s.name} = w_{s.name} - {mean}")
        self.out(f"{mean} = {mean} + d_{s.name} * (1.0 / (roffset // RBLOCK + 1))"
                 "  # Welford: each lane's (roffset // RBLOCK + 1)-th element")
        self.out(f"{m2} = {m2} + d_{s.name} * (w_{s.name} - {mean})")

    def _finish_welford(self, s: Reduction, q: Reduction, m_name: str, done: set[str]) -> None:
        """The lanes' (mean, M2, count) into the row's: Σ n·mean, and M2 = Σ M2_lane + Σ n·(mean_lane − mean)²
        (the parallel-variance formula over all lanes at once: plain tl.sum trees, no custom combine)."""
        rnumel = self.sizes.text(self._reduced_size())
        n = f"n_{s.name}"
        self.out(f"{n} = ((({rnumel}) - tl.arange(0, RBLOCK)[None, :] + RBLOCK - 1) // RBLOCK).to(tl.float32)"
                 "  # elements each lane saw")
        self.out(f"v_{s.name} = tl.sum({n} * mean_{s.name}, axis=1, keep_dims=True)  # {s.describe()}")
        self.out(f"cnt_{s.name} = tl.sum({n} + tl.zeros([XBLOCK, RBLOCK], tl.float32), axis=1, keep_dims=True)")
        self.out(f"mean_{s.name} = mean_{s.name} - v_{s.name} / cnt_{s.name}  # lane mean - row mean")
        self.out(f"m2_{s.name} = tl.sum(m2_{s.name} + {n} * mean_{s.name} * mean_{s.name}, axis=1, keep_dims=True)")
        done.add(s.name)
        self._compute_ready_reduced(done)
        m = self.graph.node(m_name)
        if m_name not in done:
            self.compute(m, done)
        dev = f"(v_{s.name} / cnt_{s.name} - v_{m_name})"
        self.out(f"v_{q.name} = m2_{s.name} + cnt_{s.name} * {dev} * {dev}  # {q.describe()}: M2 + n·(mean − m)²")
        done.add(q.name)

    def _accumulate_online(self, m: Reduction, s_node: Reduction, done: set[str]) -> None:
        """Per lane, a running max and a running sum of exp(x − max), with one exp per element: the new
        element either raises the lane's max (the sum is rescaled by exp(max − x), then counts 1) or adds
        exp(x − max); both are exp(−|x − max|). No cross-lane reduction inside the loop."""
        x = self._input_value(m, done)
        am, as_ = f"acc_{m.name}", f"acc_{s_node.name}"
        self.out(f"e_{m.name} = tl.exp(-tl.abs({x} - {am}))")
        self.out(f"{as_} = tl.where({x} > {am}, {as_} * e_{m.name} + 1.0, "
                 f'{as_} + tl.where({x} == float("-inf"), 0.0, e_{m.name}))  # online: rescale the running sum')
        self.out(f"{am} = tl.maximum({am}, {x})")

    def _init_online(self, m: Reduction, s_node: Reduction) -> None:
        self.out(f'acc_{m.name} = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)  # per lane: running max')
        self.out(f"acc_{s_node.name} = tl.zeros([XBLOCK, RBLOCK], tl.float32)  # and running sum of exp(x - max)")

    def _finish_online(self, m: Reduction, s_node: Reduction) -> None:
        """The lanes' (max, sum) into the row's: the row max, and each lane's sum rescaled to it."""
        self.out(f"v_{m.name} = tl.max(acc_{m.name}, axis=1, keep_dims=True)  # {m.describe()}")
        self.out(f'v_{s_node.name} = tl.sum(tl.where(acc_{m.name} == float("-inf"), 0.0, acc_{s_node.name} * '
                 f"tl.exp(acc_{m.name} - v_{m.name})), axis=1, keep_dims=True)  # {s_node.describe()}")

    def _emit_rindex(self, start: str, rnumel: str) -> None:
        self.out(f"rindex = {start} + tl.arange(0, RBLOCK)[None, :]  # within the row, (1, RBLOCK)")
        self.out(f"rmask = rindex < {rnumel}")
        self._coords_block(list(self.axes), "rindex")

    def _stages(self, reductions: list[Reduction]) -> dict[str, int]:
        stage: dict[str, int] = {}
        memo: dict[str, int] = {}

        def depth(name: str) -> int:  # stages a value needs to be complete before it can be computed
            if name not in self.members:
                return 0
            if name in memo:
                return memo[name]
            node = self.graph.node(name)
            d = max((depth(op.base) for op in node.operands), default=0)
            if isinstance(node, Reduction):
                d = d + 1
            memo[name] = d
            return d

        for r in reductions:
            stage[r.name] = max((depth(op.base) for op in r.operands), default=0)
        return stage

    def _compute_ready_reduced(self, done: set[str]) -> None:
        for node in self.nodes:
            if node.name in done or self.level[node.name] != "reduced" or isinstance(node, Reduction):
                continue
            if all(op.base not in self.members or op.base in done for op in node.operands):
                self.compute(node, done)

    def _acc_dtype(self, r: Reduction) -> str:
        """int64 for integer data (exact), fp32 otherwise; argmax/argmin compare in the input's kind."""
        source = r.out.dtype if r.op not in ("argmax", "argmin") else self.graph.buffer_type(r.operands[0].base).dtype
        return "tl.int64" if source in ("i64", "i32", "i16", "i8", "u8", "bool") else "tl.float32"

    _INT_IDENTITY = {"sum": "0", "max": "-9223372036854775807 - 1", "min": "9223372036854775807",
                     "argmax": "-9223372036854775807 - 1", "argmin": "9223372036854775807", "any": "0", "all": "1"}

    def _identity(self, r: Reduction) -> str:
        if self._acc_dtype(r) == "tl.int64":
            return self._INT_IDENTITY[r.op]
        return self._IDENTITY[r.op]

    _IDENTITY = FLOAT_IDENTITY

    def _reduce_operand(self, r: Reduction, done: set[str]) -> str:
        """The value reduction `r` reads at the current tile position (cast for its accumulator)."""
        view = r.operands[0]
        if view.base in self.members:
            producer = self.graph.node(view.base)
            if isinstance(producer, Reduction):
                raise CodegenUnsupported(f"{r.name} reduces a reduction")
            if self.level[producer.name] == "inline":
                raise CodegenUnsupported(f"{r.name} reduces a recomputed {producer.name}")
            self.compute(producer, done)
            self._check_aligned(r, 0)
            value = f"v_{view.base}"
        else:
            value = self.leaf(r, "full")(Load(0, self.graph.buffer_type(view.base).dtype))
        if r.op in ("any", "all"):
            value = f"({value} != 0).to(tl.int64)"
        if self._acc_dtype(r) == "tl.int64" and r.op not in ("any", "all"):
            value = f"({value}).to(tl.int64)"
        return value

    def _input_value(self, r: Reduction, done: set[str]) -> str:
        value = self._reduce_operand(r, done)
        self.out(f"x_{r.name} = tl.where(xmask & rmask, {value}, {self._identity(r)})")
        return f"x_{r.name}"

    def _reduce_persistent(self, r: Reduction, done: set[str]) -> None:
        x = self._input_value(r, done)
        if r.op in ("sum", "any"):
            fn = "tl.sum" if r.op == "sum" else "tl.max"
            self.out(f"v_{r.name} = {fn}({x}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op in ("max", "min", "all"):
            fn = "tl.max" if r.op == "max" else "tl.min"
            self.out(f"v_{r.name} = {fn}({x}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op in ("argmax", "argmin"):
            fn = "tl.max" if r.op == "argmax" else "tl.min"
            self.out(f"m_{r.name} = {fn}({x}, axis=1, keep_dims=True)")
            self.out(f"v_{r.name} = tl.min(tl.where(({x} == m_{r.name}) & rmask, rindex, 2147483647), "
                     f"axis=1, keep_dims=True).to(tl.int64)  # {r.describe()}, first index")
        else:
            raise CodegenUnsupported(f"reduction {r.op}")
        done.add(r.name)

    def _init_accumulator(self, r: Reduction) -> None:
        dt = self._acc_dtype(r)
        if r.op in ("argmax", "argmin"):
            self.out(f"acc_{r.name} = tl.full([XBLOCK, RBLOCK], {self._identity(r)}, {dt})")
            self.out(f"idx_{r.name} = tl.full([XBLOCK, RBLOCK], 2147483647, tl.int32)")
        elif r.op in ("sum", "max", "min", "any", "all"):
            self.out(f"acc_{r.name} = tl.full([XBLOCK, RBLOCK], {self._identity(r)}, {dt})")
        else:
            raise CodegenUnsupported(f"reduction {r.op}")

    def _accumulate(self, r: Reduction, done: set[str]) -> None:
        x = self._input_value(r, done)
        a = f"acc_{r.name}"
        if r.op == "sum":
            self.out(f"{a} = {a} + {x}")
        elif r.op in ("max", "any"):
            self.out(f"{a} = tl.maximum({a}, {x})")
        elif r.op in ("min", "all"):
            self.out(f"{a} = tl.minimum({a}, {x})")
        else:  # argmax/argmin: each lane keeps its first best (so the pass must walk forwards)
            if self._loops:
                self._loops[-1]["ordered"] = True
            cmp = ">" if r.op == "argmax" else "<"
            self.out(f"better = {x} {cmp} {a}")
            self.out(f"idx_{r.name} = tl.where(better, rindex, idx_{r.name})")
            self.out(f"{a} = tl.where(better, {x}, {a})")

    def _finish_accumulator(self, r: Reduction) -> None:
        a = f"acc_{r.name}"
        if r.op == "sum":
            self.out(f"v_{r.name} = tl.sum({a}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op in ("max", "any"):
            self.out(f"v_{r.name} = tl.max({a}, axis=1, keep_dims=True)  # {r.describe()}")
        elif r.op in ("min", "all"):
            self.out(f"v_{r.name} = tl.min({a}, axis=1, keep_dims=True)  # {r.describe()}")
        else:
            fn = "tl.max" if r.op == "argmax" else "tl.min"
            self.out(f"m_{r.name} = {fn}({a}, axis=1, keep_dims=True)")
            self.out(f"v_{r.name} = tl.min(tl.where({a} == m_{r.name}, idx_{r.name}, 2147483647), "
                     f"axis=1, keep_dims=True).to(tl.int64)  # {r.describe()}, first index")

    def _outputs(self) -> list[Node]:
        return [self.graph.node(o) for o in self.group.outputs]

    def _store_outputs(self, level: str, done: set[str] | None = None) -> None:
        done = set() if done is None else done
        for node in self._outputs():
            if self.level[node.name] != level:
                continue
            if not isinstance(node, Reduction):
                self.compute(node, done)
            value = f"v_{node.name}"
            out_dtype = node.out.dtype
            if out_dtype != compute_dtype(out_dtype) or out_dtype in ("i64", "i32", "bool"):
                value = f"{value}.to({TL_DTYPES[out_dtype]})"
            self.out(f"tl.store({self.pointer(node.name)} + ({self.store_offset(node)}), {value}, "
                     f"mask={self.mask(level)})")

    def _finish(self, xblock: int, rblock: int, rows: SizeExpr, split: int = 0,
                scratch: tuple[Scratch, ...] = ()) -> GeneratedKernel:
        body = self._expand(self.out.lines)
        dtypes = {s.buffer: s.dtype for s in scratch}
        dtypes |= {b: self.graph.buffer_type(b).dtype for b in self.pointers if b not in dtypes}
        constexprs = [("XBLOCK", xblock)] + ([("RBLOCK", rblock)] if self.reduce else [])
        constexprs += [("SPLIT", split)] if split else []
        host_constexprs = ()
        if self.reduce and self.persistent and not split:   # the whole row in one block, whatever its length
            row = self._reduced_size()
            traced = next_power_of_two(prod(self.space_concrete[k] for k in self.axes))
            constexprs = [(n, traced if n == "RBLOCK" else v) for n, v in constexprs]
            host_constexprs = (("RBLOCK", f"triton.next_power_of_2({self.sizes.host(row)})"),)
        space = " x ".join(self.sizes.host(e) for e in self.orig)
        axes = self.orig_axes
        doc = (f"{self.group.family} over ({space})"
               + (f", reducing axes {list(axes)}" if axes else "")
               + f": {', '.join(self.group.nodes)}."
               + (" Tiles: rows x the last axis." if self.tiled == "persistent" else "")
               + (" Tiles: rows x chunks of the last axis." if self.tiled == "looped" else "")
               + (" Persistent: one read of each input." if self.reduce and self.persistent and not self.tiled else ""))
        options = self.schedule.options() + ((("enable_fp_fusion", False),) if self._contraction_hazard() else ())
        grid = one_dim(const(split), 1) if split else one_dim(rows, xblock)
        return assemble(group=self.group.name, name=self.name, doc=doc, body=body, pointers=self.pointers,
                        pointer_dtypes=dtypes, sizes=self.sizes, big=self.big, constexprs=constexprs,
                        options=options, grid=(grid,), host_constexprs=host_constexprs, scratch=scratch,
                        helpers=tuple(math_helper(h) for h in sorted(self.helpers)))


def _has_op(expr, ops: tuple[str, ...]) -> bool:
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Op):
            if e.op in ops:
                return True
            stack += list(e.args)
    return False


def _is_op(expr, op: str) -> bool:
    return isinstance(expr, Op) and expr.op == op


def _squared(node: Node) -> str | None:
    """The member a pointwise node squares (x·x, square(x), x ** 2), or None."""
    if not isinstance(node, Pointwise):
        return None
    e = node.expr
    if not isinstance(e, Op):
        return None
    if e.op == "mul" and all(isinstance(a, Load) and a.gather is None and a.valid is None for a in e.args):
        a, b = (node.operands[x.operand] for x in e.args)
        if a == b and a.base and tuple(a.strides) == contiguous_strides(tuple(a.shape)) and not a.offset:
            return a.base
        return None
    if e.op in ("square", "pow") and isinstance(e.args[0], Load) and e.args[0].gather is None \
            and e.args[0].valid is None:
        if e.op == "pow" and not (isinstance(e.args[1], Const) and float(e.args[1].value) == 2.0):
            return None
        a = node.operands[e.args[0].operand]
        if tuple(a.strides) == contiguous_strides(tuple(a.shape)) and not a.offset:
            return a.base
    return None


def _unit_dims_only(view, producer) -> bool:
    """A keepdim view (size-1 axes added or removed) of a contiguous producer."""
    kept = [(s, st) for s, st in zip(view.shape, view.strides) if s != 1]
    expected = [(s, st) for s, st in zip(producer.out.shape, contiguous_strides(producer.out.shape)) if s != 1]
    return kept == expected
