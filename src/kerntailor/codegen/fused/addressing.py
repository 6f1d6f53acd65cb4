"""Index text of a fused kernel: where each operand's element is at the current tile position.

A pointwise kernel's tile is [XBLOCK] elements (`xindex`, the flat position); a reduction's (and a tiled
pointwise kernel's) is [XBLOCK rows, RBLOCK elements of the row] (`xindex`, `rindex`). An offset uses the
fewest coordinates: the flat index itself where the operand is contiguous over the whole tile, `rindex` where
it is over the reduced axes, else coordinates `i<axis>` times strides (Layout defines the coordinates used).
"""

from __future__ import annotations

from typing import NamedTuple

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.layout import Layout
from kerntailor.codegen.fused.space import IterationSpace, symbolic_strides
from kerntailor.codegen.sizes import SizeArgs, const, product, same
from kerntailor.ir.nodes import Node, Reduction
from kerntailor.ir.types import View


class Offset(NamedTuple):
    text: str         # the element offset, broadcast to the tile's shape where it lacks some axes
    bare: str         # the offset alone
    used: set[int]    # kernel axes whose coordinates it uses
    moves: bool       # whether it moves along the reduced axes (rindex, or a gathered coordinate)


class Addressing:
    def __init__(self, space: IterationSpace, layout: Layout, sizes: SizeArgs, reduce: bool):
        self.space, self.layout, self.sizes = space, layout, sizes
        self.reduce = reduce   # rows x chunks tiles (a reduction, or a pointwise group walked as tiles)

    def kernel_view(self, node: Node, j: int, at_level: str = "full"):
        """Operand j of `node` over the kernel's axes: (View, shape, strides, offset terms)."""
        frame, conc, sym, offset = self.space.frame_view(node, j, at_level)
        fc, fs = self.space.final(frame, conc, sym)
        view = View(node.operands[j].base, self.space.concrete, tuple(fc), node.operands[j].offset)
        return view, list(self.space.shape), fs, offset

    def trailing(self) -> bool:
        """The reduced axes are the innermost ones."""
        shape, axes = self.space.shape, self.space.axes
        return axes == tuple(range(len(shape) - len(axes), len(shape)))

    def reduced_size(self) -> SizeExpr:
        r = product([self.space.shape[k] for k in self.space.axes])
        if r is None:
            raise CodegenUnsupported("reduced size is not a product of input dims")
        return r

    def offset(self, node: Node, j: int, at_level: str, gathered: dict[int, str] | None = None,
               view=None) -> Offset:
        """Element offset of operand j of `node` at the current tile position (or, with `gathered`, at
        the position whose coordinate along an axis is the given expression). `view` overrides the
        operand: (concrete strides, strides, offset terms) over the kernel's axes."""
        space, ci = self.space, self.layout.ci
        shape, concrete, outer = space.shape, space.concrete, space.outer
        if view is not None:
            conc, strides, offsets = view
        else:
            v, _, strides, offsets = self.kernel_view(node, j, "full" if isinstance(node, Reduction) else at_level)
            conc = list(v.strides)
        full = at_level == "full" or not self.reduce
        coord = (lambda k: f"({gathered[k]})" if k in gathered else ci(k)) if gathered else ci
        axes = list(range(len(shape))) if full else list(outer)
        terms, has_outer, used, rindex = [], False, set(), False
        if full and not gathered:
            # fast paths: the reduced part (or the whole tile) is contiguous
            if not self.reduce and self.contiguous(strides, range(len(shape))):
                terms, axes, has_outer = ["xindex"], [], True
            elif self.reduce and self.trailing() and self.contiguous(strides, space.axes):
                rindex = True
                if len(outer) > 1 and self.contiguous(strides, range(len(shape))):
                    terms, axes, has_outer = [f"xindex * {self.sizes.text(self.reduced_size())} + rindex"], [], True
                else:
                    terms, axes = ["rindex"], list(outer)
        for k in axes:
            if conc[k] == 0 and strides[k].is_constant:
                continue
            if concrete[k] == 1 and shape[k].is_constant:
                continue
            terms.append(f"{coord(k)} * {self.sizes.text(strides[k])}")
            has_outer = has_outer or k in outer
            used.add(k)
        varying = bool(terms)
        for offset in offsets:
            if not offset.is_constant or offset.coeff + offset.offset != 0:
                terms.append(self.sizes.text(offset))
        bare = text = " + ".join(terms) or "0"
        if not varying or (self.reduce and at_level == "full" and not gathered and not has_outer):
            # a pointer block must have the mask's shape: broadcast an offset that lacks some axes
            text = f"{text} + tl.zeros({self.tile(at_level, gathered)}, tl.int32)"
        return Offset(text, bare, used, rindex or bool(gathered))

    def tile(self, level: str, gathered) -> str:
        if not self.reduce:
            return "[XBLOCK]"
        return "[XBLOCK, RBLOCK]" if level == "full" and not gathered else "[XBLOCK, 1]"

    def contiguous(self, strides: list[SizeExpr], axes) -> bool:
        axes = list(axes)
        expected = symbolic_strides([self.space.shape[k] for k in axes])
        return all(e is not None and (same(strides[k], e) or (self.space.concrete[k] == 1))
                   for k, e in zip(axes, expected))

    def store_offset(self, node: Node) -> str:
        if self.space.level[node.name] == "reduced":
            return "xindex"
        if not self.reduce:
            return "xindex"
        if self.trailing():
            r = self.sizes.text(product([self.space.shape[k] for k in self.space.axes]) or const(0))
            return f"xindex * {r} + rindex"
        strides = symbolic_strides(self.space.shape)
        if any(s is None for s in strides):
            raise CodegenUnsupported("output strides are not monomials")
        return " + ".join(f"{self.layout.ci(k)} * {self.sizes.text(s)}" for k, s in enumerate(strides))

    def mask(self, level: str) -> str:
        if not self.reduce:
            return "xmask"
        return "xmask & rmask" if level == "full" else "xmask"

    def frame_coord(self, frame: tuple[int, ...], axis: int) -> str:
        """The coordinate along axis `axis` of `frame`, from the kernel's coordinates."""
        space, ci = self.space, self.layout.ci
        lo, hi = space.ranges[frame][axis]
        if lo == hi:
            return "0"
        finals = sorted({space.final_of[m] for m in range(lo, hi)})
        if any(not set(space.groups[f]) <= set(range(lo, hi)) for f in finals):
            raise CodegenUnsupported("an index along an axis merged with another")
        if len(finals) == 1:
            return ci(finals[0])
        terms = []
        for pos, f in enumerate(finals):
            scale = product([space.shape[g] for g in finals[pos + 1:]]) if pos + 1 < len(finals) else const(1)
            terms.append(ci(f) if scale.is_constant and scale.coeff == 1 else
                         f"{ci(f)} * {self.sizes.text(scale)}")
        return "(" + " + ".join(terms) + ")"

    def index_of(self, node: Node):
        """Renders an Index leaf of `node` (an axis of its own shape) from the kernel's coordinates."""
        return lambda axis: self.frame_coord(*self.space.index_frame(node, axis))
