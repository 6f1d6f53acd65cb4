"""What the anchor families' writers share (scan, pool, matmul): a kernel whose first node is an anchor op and
whose other nodes are a pointwise epilogue over the anchor's output shape.

Operand offsets go through Views (any strides, negative ones included, and offsets, all runtime size arguments
where they vary); a load reads only the tile axes its offset varies along; the epilogue's values are
`v_<node>` over the tile, stored once in each output's dtype.
"""

from __future__ import annotations

import re

from kerntailor.capture.generalize import Generalized, SizeExpr
from kerntailor.codegen.assemble import assemble
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.helpers import math_helper
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis
from kerntailor.codegen.render import TL_DTYPES, ExprRenderer, compute_dtype
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import const, product, same
from kerntailor.codegen.writer import KernelWriter
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Node, Pointwise
from kerntailor.ir.types import View, contiguous_strides
from kerntailor.plan.fusion import FusionGroup, layout_store

INT_DTYPES = ("i64", "i32", "i16", "i8", "u8", "bool")


class AnchorWriter(KernelWriter):
    """Common parts of a kernel whose first node is an anchor and whose other nodes are a pointwise
    epilogue over the anchor's output shape."""

    anchor_type: type = Node
    takes_prologue = False  # whether the family's writer evaluates a FusionGroup.prologue
    takes_layout_stores = False  # whether the family's writer stores through store_outputs (plan's layout_store)

    def __init__(self, gen: Generalized, group: FusionGroup, schedule: Schedule, host_names: dict, name: str):
        super().__init__(gen, group, schedule, host_names, name)
        # the prologue (a pool's: plan/fusion.py) comes before the anchor; the writer evaluates it where the anchor
        # reads its input
        self.prologue = [n for n in self.nodes if n.name in group.prologue]
        body = [n for n in self.nodes if n.name not in group.prologue]
        if self.prologue and not self.takes_prologue:
            raise CodegenUnsupported(f"{group.name}: a {group.family} kernel takes no prologue")
        self.anchor = body[0]
        if not isinstance(self.anchor, self.anchor_type):
            raise CodegenUnsupported(f"{group.name}: expected a {self.anchor_type.__name__} first, "
                                     f"got {type(self.anchor).__name__}")
        for n in self.prologue:
            if not isinstance(n, Pointwise):
                raise CodegenUnsupported(f"{group.name}: {n.name} ({n.family}) in a {group.family} prologue")
        tail = self.tail_names()
        # members that copy a member at the anchor's shape to a permuted layout (plan/fusion.py's layout_store):
        # never computed, their source's tile is stored at their strides (store_outputs)
        by_name = {n.name: n for n in body}
        self.layout_stores = {n.name: perm for n in body[1:] if self.takes_layout_stores
                              and (perm := layout_store(n, by_name, self.anchor.out.shape)) is not None}
        self.epilogue = [n for n in body[1:] if n.name not in tail and n.name not in self.layout_stores]
        for n in self.epilogue:
            if not isinstance(n, Pointwise):
                raise CodegenUnsupported(f"{group.name}: {n.name} ({n.family}) in a {group.family} epilogue")
            if n.out.shape != self.anchor.out.shape:
                raise CodegenUnsupported(f"{group.name}: epilogue {n.name} of shape {n.out.shape}, "
                                         f"not the {group.family} output's {self.anchor.out.shape}")
        buffers = [self.graph.buffer_type(v.base).numel for n in self.nodes for v in n.operands]
        self.big = max([n.out.numel for n in self.nodes] + buffers) >= 2 ** 31 - 1
        # set by the family writer: axis -> coordinate text, the tile shape, the full-tile mask
        self.coords: dict[int, str] = {}
        self.tile = "[XBLOCK]"
        self.full_mask = "xmask"
        self.flat_index = ""  # a 1-d tile's flat position in the row-major iteration space, if any

    def tail_names(self) -> set[str]:
        """Members computed after the epilogue by the family's own code (a GEMM's row reductions)."""
        return set()

    # --- sizes and views ---------------------------------------------------------------------------
    def operand_offset(self, node: Node, j: int, coords: dict[int, str]) -> str:
        """Element offset of operand j of `node` at the position whose coordinate along each of the view's
        axes is `coords[axis]` (strides may be negative: a flip; the offset then points at its end)."""
        v, shape, strides, offset = self.view_exprs(node, j)
        terms = []
        if self.flat_index and coords is self.coords and self._contiguous(v, shape, strides):
            terms.append(self.flat_index)  # row-major over the iteration space: the flat index itself
            v = View(v.base, (), (), v.offset)
        for k in range(len(v.shape)):
            if v.strides[k] == 0 and strides[k].is_constant:
                continue  # broadcast
            if v.shape[k] == 1 and shape[k].is_constant:
                continue
            st = self.sizes.text(strides[k])
            terms.append(coords[k] if st == "1" else f"{coords[k]} * {st}")
        if not offset.is_constant or offset.coeff + offset.offset != 0:
            terms.append(self.sizes.text(offset))
        return " + ".join(terms) or "0"

    def _contiguous(self, v: View, shape: list[SizeExpr], strides: list[SizeExpr]) -> bool:
        if tuple(v.shape) != tuple(self.anchor.out.shape):
            return False
        for k in range(len(shape)):
            if v.shape[k] == 1 and shape[k].is_constant:
                continue
            expected = product(shape[k + 1:]) if k + 1 < len(shape) else const(1)
            if expected is None or not same(strides[k], expected):
                return False
        return True

    def full_tile(self, offset: str) -> str:
        """A pointer block must have the mask's shape: broadcast an offset that lacks some tile axis."""
        if all(any(mentions(offset, n) for n in names) for names in self.tile_axes()):
            return offset
        return f"{offset} + tl.zeros({self.tile}, tl.int32)"

    def tile_axes(self) -> list[list[str]]:
        """For each axis of the tile, the names of values that vary along it."""
        return [list(self.coords.values()) + ([self.flat_index] if self.flat_index else [])]

    def load_text(self, buffer: str, offset: str, mask: str, other: str = "0") -> str:
        dtype = self.graph.buffer_type(buffer).dtype
        text = f"tl.load({self.pointer(buffer)} + ({self.full_tile(offset)}), mask={mask}, other={other})"
        cdt = compute_dtype(dtype)
        if cdt != dtype:
            text = f"{text}.to({TL_DTYPES[cdt]})"
        return text

    # --- the epilogue ------------------------------------------------------------------------------
    def _check_aligned(self, node: Node, j: int) -> None:
        view = node.operands[j]
        producer = self.graph.node(view.base)
        if tuple(view.shape) != tuple(producer.out.shape) or view.offset != 0 or any(
                st != c for s, st, c in zip(view.shape, view.strides, contiguous_strides(view.shape)) if s != 1):
            raise CodegenUnsupported(f"{node.name} reads {producer.name} of its group through a view "
                                     f"{view.describe()}", node.name)   # a cut before it reads it from memory

    def member_value(self, node: Node, j: int) -> str:
        """The value operand j of `node` reads from a member of the group: the member's tile, read as it is (a
        family's writer may know other views of its own values: a scan's row end)."""
        self._check_aligned(node, j)
        return f"v_{node.operands[j].base}"

    def leaf(self, node: Node):
        return self.leaf_at(node, self.coords, self.full_mask)

    def leaf_at(self, node: Node, coords: dict[int, str], full_mask: str):
        """Renders `node`'s Loads at `coords` under `full_mask` (leaf: the tile's own; a scan's prologue: at an
        exclusive scan's predecessor)."""
        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                if gather is not None:
                    raise CodegenUnsupported(f"{node.name} gathers from {view.base} of its group")
                return self.member_value(node, load.operand)
            if len(view.shape) != len(self.anchor.out.shape):
                raise CodegenUnsupported(f"{node.name} operand {load.operand} has rank {len(view.shape)}")
            offset = self.operand_offset(node, load.operand, coords)
            if gather is not None:
                stride = self.sizes.text(self.sizes.slot(("node", node.name, "gather", i), load.gather[0]))
                offset = f"{offset} + ({gather}).to(tl.int64) * {stride}"
            mask = full_mask if valid is None else f"{full_mask} & {valid}"
            return self.cached_load(self.load_text(view.base, offset, mask))
        return render

    def compute_epilogue(self) -> None:
        for node in self.epilogue:
            self.compute_node(node)

    def compute_node(self, node: Node, coords: dict[int, str] | None = None, mask: str | None = None,
                     note: str = "") -> None:
        """v_<node> = its expression over the tile (at `coords` under `mask`, where given)."""
        at = self.coords if coords is None else coords
        leaf = self.leaf(node) if coords is None else self.leaf_at(node, coords, mask or self.full_mask)
        renderer = ExprRenderer(leaf, lambda a: at[a], self.slot(node), short_outputs=self.short_outputs,
                                bind=self.bind)
        text = renderer.render(node.expr)
        self.helpers.update(renderer.helpers)
        self.out(f"v_{node.name} = {text}  # {node.origin}, {node.out}{note}")

    def store_outputs(self, space: list[SizeExpr], names: tuple[str, ...] | None = None) -> None:
        """Each of the group's outputs (or of `names`) over the tile, in its dtype, at the output's row-major offset;
        a layout store's (self.layout_stores) its source's tile at the copy's own row-major offset."""
        row_major = self._store_offset(space, _row_major(space))   # even where flat_index serves (its size arguments)
        offset = self.full_tile(self.flat_index or row_major)
        for name in self.group.outputs if names is None else names:
            node = self.graph.node(name)
            value, at = f"v_{name}", offset
            if name in self.layout_stores:
                value, at = f"v_{node.operands[0].base}", self.full_tile(self._layout_offset(node, space))
            if node.out.dtype != compute_dtype(node.out.dtype) or node.out.dtype in INT_DTYPES:
                value = f"{value}.to({TL_DTYPES[node.out.dtype]})"
            self.out(f"tl.store({self.pointer(name)} + ({at}), {value}, mask={self.full_mask})")

    def _store_offset(self, space: list[SizeExpr], strides: list[SizeExpr]) -> str:
        """The offset of the tile's element whose coordinate along each axis k of `space` is self.coords[k], in a
        buffer with `strides` along those axes."""
        terms = []
        for k, s in enumerate(strides):
            if self.anchor.out.shape[k] == 1 and space[k].is_constant:
                continue
            st = self.sizes.text(s)
            terms.append(self.coords[k] if st == "1" else f"{self.coords[k]} * {st}")
        return " + ".join(terms) or "0"

    def _layout_offset(self, node: Node, space: list[SizeExpr]) -> str:
        """Where layout store `node` (its axis i: the anchor's axis perm[i]) keeps the tile's elements: the anchor's
        coordinates times the copy's row-major strides, permuted back. Its view must read the anchor's layout at
        every size, not only at the traced one (else CodegenUnsupported)."""
        perm = self.layout_stores[node.name]
        own = [self.sizes.slot(("node", node.name, "out", i), s) for i, s in enumerate(node.out.shape)]
        _, shape, view_strides, _ = self.view_exprs(node, 0)
        source = _row_major(space)
        strides: list[SizeExpr] = [const(0)] * len(space)
        for i, (k, st) in enumerate(zip(perm, _row_major(own))):
            if node.out.shape[i] != 1 and not (same(view_strides[i], source[k]) and same(shape[i], space[k])):
                raise CodegenUnsupported(f"{node.name} reads {node.operands[0].base} through a view that permutes "
                                         "its axes only at some sizes")
            strides[k] = st
        return self._store_offset(space, strides)

    # --- the kernel --------------------------------------------------------------------------------
    def finish(self, doc: str, constexprs: list[tuple[str, int]], grid: tuple[GridAxis, ...]) -> GeneratedKernel:
        return assemble(group=self.group.name, name=self.name, doc=doc, body=self.out.lines, pointers=self.pointers,
                        pointer_dtypes={b: self.graph.buffer_type(b).dtype for b in self.pointers}, sizes=self.sizes,
                        big=self.big, constexprs=constexprs, options=self.schedule.options(), grid=grid,
                        helpers=tuple(math_helper(h) for h in sorted(self.helpers)))

    def unravel(self, axes: list[int], sizes: list[SizeExpr], flat: str) -> None:
        """Coordinates i<axis> of `flat`, row-major over `axes` (of sizes `sizes`)."""
        if len(axes) == 1:
            self.out(f"i{axes[0]} = {flat}")
            return
        rest = flat
        for pos in range(len(axes) - 1, -1, -1):
            k = axes[pos]
            if pos == 0:
                self.out(f"i{k} = {rest}")
            else:
                size = self.sizes.text(sizes[pos])
                self.out(f"i{k} = {rest} % {size}")
                self.out(f"q{k} = {rest} // {size}")
                rest = f"q{k}"


def _row_major(space: list[SizeExpr]) -> list[SizeExpr]:
    """The strides of a contiguous buffer of shape `space` (CodegenUnsupported where one is not a monomial)."""
    strides = [product(space[k + 1:]) if k + 1 < len(space) else const(1) for k in range(len(space))]
    if any(s is None for s in strides):
        raise CodegenUnsupported("output strides are not monomials")
    return strides


def mentions(text: str, name: str) -> bool:
    """Whether `name` occurs in `text` as a whole name (not part of another, nor an attribute)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None
