"""An attention operand's pointwise prologue (plan/fusion.py: FusionGroup.operand_prologues), computed on the tile
the kernel would have loaded: Q's (BLOCK_M, BLOCK_D) once per program, K^T's (BLOCK_D, BLOCK_N) on every key block.

Rotary embedding, q * cos + rotate_half(q) * sin with rotate_half = cat(-q[..., d/2:], q[..., :d/2]), becomes

    ld0 = tl.load(mm0_ptr + q_off(t, d))                       # the projection at the tile's own columns
    ld1 = tl.load(cos_ptr + t * D + d)
    ld2 = tl.load(mm0_ptr + q_off(t, d) + D/2, mask=d < D/2)   # the cat's halves: its own conditions mask them
    ld3 = tl.load(mm0_ptr + q_off(t, d) - D/2, mask=d >= D/2)
    q = ld0 * ld1 + tl.where(d < D/2, -ld2, ld3) * sin(t, d)

so the rotated q and k are never written. Members at the operand's shape are values over the tile (`p<j>_<name>`);
members of another shape (the halves) are recomputed where their reader reads them, at its coordinates shifted
along at most one axis (codegen/fused/space.py's view_shift), under the reader's mask. The result is 0 outside the
tile's mask (padded head dims and rows past the sequence: prologue(0) need not be 0, and a padded head column must
add nothing to the scores) and cast to the operand's dtype, as the pointwise kernel would have stored it.
"""

from __future__ import annotations

from kerntailor.codegen.anchor import mentions
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.space import compose, view_shift
from kerntailor.codegen.render import TL_DTYPES, ExprRenderer, compute_dtype
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Node
from kerntailor.ir.types import contiguous_strides


def operand_prologue(writer, j: int) -> list[Node]:
    """The members that compute attention operand j (in order), or [] where it is loaded from memory."""
    names = dict(writer.group.operand_prologues).get(j, ())
    return [n for n in writer.prologue if n.name in names]


def compute_prologue(writer, j: int, coords: dict[int, str], masks: list[str], tile: str, rows: str,
                     name: str) -> None:
    """`name` = operand j's prologue over the tile at `coords` (one coordinate per axis of the operand), 0 outside
    the tile's `masks` (none: the whole tile is inside), in the operand's dtype. `tile`: the tile's shape (a load whose
    offset lacks one of its axes is broadcast to it); `rows`: the coordinate that varies along the sequence (with rd,
    the head dim: the tile's two axes)."""
    att = writer.anchor
    members = operand_prologue(writer, j)
    shape = att.operands[j].shape
    full = {n.name for n in members if n.out.shape == shape}
    if att.operands[j].base not in full:
        raise CodegenUnsupported(f"{att.name} reads {att.operands[j].base}, no value of its prologue", att.name)
    mask = " & ".join(masks) or None
    saved, writer.loads = writer.loads, {}   # a section of its own (a key block's loop body)
    for node in members:
        if node.name in full:
            text = _render(writer, node, coords, {}, None, mask, tile, rows, full, j)
            writer.out(f"p{j}_{node.name} = {text}  # {node.origin}, {node.out} (prologue)")
    writer.loads = saved
    result = f"p{j}_{att.operands[j].base}"
    dtype = writer.graph.buffer_type(att.operands[j].base).dtype
    cast = f".to({TL_DTYPES[dtype]})" if compute_dtype(dtype) != dtype else ""
    if mask is None:
        writer.out(f"{name} = {result}{cast}  # {att.operands[j].base}, computed")
    else:
        writer.out(f"{name} = tl.where({mask}, {result}, 0.0){cast}  # outside the tile: 0, not prologue(0)")


def _render(writer, node: Node, coords: dict[int, str], shift: dict, valid: str | None, mask: str | None,
            tile: str, rows: str, full: set[str], j: int) -> str:
    """`node`'s expression at `coords` shifted by `shift`, its loads under `mask` & `valid`."""
    def index(axis: int) -> str:
        text = coords[axis]
        for s in shift.get(axis, []):
            text = f"({text} + {writer.sizes.text(s)})"
        return text

    def leaf(load: Load, gather: str | None, lvalid: str | None, i: int) -> str:
        if gather is not None:
            raise CodegenUnsupported(f"an indirect load in {node.name}, an attention prologue", writer.anchor.name)
        view = node.operands[load.operand]
        masks = [m for m in (valid, lvalid) if m]
        if view.base in writer.members:
            producer = writer.graph.node(view.base)
            if producer.name in full:
                if shift or view.offset or tuple(view.shape) != tuple(producer.out.shape) \
                        or tuple(view.strides) != contiguous_strides(view.shape):
                    raise CodegenUnsupported(f"{node.name} reads {producer.name} of its prologue through a view",
                                             writer.anchor.name)
                return f"p{j}_{producer.name}"
            padded = any(a > b for a, b in zip(view.shape, producer.out.shape)) or view.offset != 0
            if padded and not masks:
                raise CodegenUnsupported(f"{producer.name} is read past its extent without a mask", writer.anchor.name)
            _, _, strides, offset = writer.view_exprs(node, load.operand)
            out_syms = [writer.sizes.slot(("node", producer.name, "out", k), s)
                        for k, s in enumerate(producer.out.shape)]
            inner = compose(shift, view_shift(node, load.operand, producer, strides, offset, out_syms))
            return "(" + _render(writer, producer, coords, inner, " & ".join(masks) or None, mask, tile, rows,
                                 full, j) + ")"
        if len(view.shape) != len(coords):
            raise CodegenUnsupported(f"{node.name} operand {load.operand} has rank {len(view.shape)}",
                                     writer.anchor.name)
        offset = writer.operand_offset(node, load.operand, {a: index(a) for a in coords})
        if not (mentions(offset, rows) and mentions(offset, "rd")):
            offset = f"{offset} + tl.zeros({tile}, tl.int32)"   # a pointer block of the mask's shape
        dtype = writer.graph.buffer_type(view.base).dtype
        where = " & ".join(([mask] if mask else []) + masks)
        text = f"tl.load({writer.pointer(view.base)} + ({offset}){f', mask={where}, other=0' if where else ''})"
        if compute_dtype(dtype) != dtype:
            text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
        return writer.cached_load(text)

    renderer = ExprRenderer(leaf, index, writer.slot(node), short_outputs=writer.short_outputs, bind=writer.bind)
    text = renderer.render(node.expr)
    writer.helpers.update(renderer.helpers)
    return text
