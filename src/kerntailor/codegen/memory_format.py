"""A buffer kept in another memory format: the library convolution's output left channels-last for its tail.

cuDNN (and MIOpen) run their fastest convolutions on channels-last tensors, and torch.compile keeps its whole graph
that way: the convolution writes (N, H, W, C) and the Triton tail reads it so. Copying the output back to NCHW
for our tail cost more than cuDNN's NHWC kernels saved (BENCHMARKS.md, "The library convolution on channels-last
copies": 69_Conv2d_HardSwish_ReLU 1578 us against 918 NCHW, H200 fp32, 2026-12-02). So a channels-last library
convolution (LibrarySchedule.channels_last) leaves its output as it is, and the kernels after it index that buffer
by its physical strides:

    conv output k0 (N, C, H, W), stored (N, H, W, C): strides (H·W·C, 1, W·C, C) instead of (C·H·W, H·W, W, 1)
    a reader's view (N, C, H·W) of it: strides (H·W·C, 1, C)

`kept_layout` decides whether a convolution's output can stay so: it is no module output (outputs keep the layout
the reference returns, written by the tail), another library call reads it only whole (the tensor itself, whose
strides torch honours), and every generated reader's view maps onto whole or split dims of the buffer that the
new order keeps adjacent (a GroupNorm view (N, G, C/G·H·W) merges C with H·W, which NHWC separates: not kept).
`relayout` rewrites those views' strides, concrete and symbolic, in a copy of the Generalized graph: the writers
then take the graph as they always do (coalescing the axes the new strides make adjacent), and nothing else
changes: the buffer's logical shape, sizes and the host's allocation are the library's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from fractions import Fraction
from math import prod

from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen.sizes import const, is_whole, product, quotient, same
from kerntailor.ir.nodes import Conv, Node
from kerntailor.ir.types import View, contiguous_strides

# readers that may run on the host (library.py): they are given the output contiguous, as before
LIBRARY_READERS = ("matmul", "conv", "attention", "recurrent")
TORCH_FORMATS = {4: "torch.channels_last", 5: "torch.channels_last_3d"}   # by the buffer's rank


@dataclass(frozen=True)
class BufferLayout:
    """Buffer `buffer` (a node's output, logical shape as its node says) stored with its dims in `order`, outermost
    first: channels-last of (N, C, H, W) is (0, 2, 3, 1). `views`: each reader view's (path prefix, new concrete
    strides, new symbolic strides)."""

    buffer: str
    order: tuple[int, ...]
    views: tuple[tuple[tuple, tuple[int, ...], tuple[SizeExpr, ...]], ...]

    @property
    def torch_format(self) -> str:
        return TORCH_FORMATS[len(self.order)]


def permuted_axes(view: View, strides: list[SizeExpr], inner: int, outer: int) -> bool:
    """Whether `view` steps by 1 along axis `inner` (its symbolic strides `strides` too) and by more along axis
    `outer`: a channels-last buffer read in its logical order, where neighbours along `outer` (the store's
    contiguous axis) lie C apart. Its readers tile in 2-D, loads contiguous along `inner` and stores along
    `outer`: the pointwise writer's tile2d (FusedWriter.permuted_read), the pool writer's channel-inner rows."""
    return view.strides[inner] == 1 and view.strides[outer] > 1 and same(strides[inner], const(1))


def channels_last_order(rank: int) -> tuple[int, ...]:
    return (0, *range(2, rank), 1)


def kept_layout(gen: Generalized, node: Node) -> BufferLayout | None:
    """The channels-last layout convolution `node`'s output can keep (module docstring), or None where it cannot:
    then the output is made contiguous for its readers, as before. A pure function of `gen` (the graph as
    captured): generate_module and the library writer ask it alike."""
    if not isinstance(node, Conv) or len(node.out.shape) not in TORCH_FORMATS:
        return None
    graph, shape = gen.graph, tuple(node.out.shape)
    if any(v.base == node.name for v in graph.outputs) or 1 in shape:
        return None   # an output keeps the reference's layout; a size-1 dim at the traced sizes says nothing
    order = channels_last_order(len(shape))
    sizes = _dim_exprs(gen, node)
    views = []
    for reader in graph.nodes:
        for j, v in enumerate(reader.operands):
            if v.base != node.name:
                continue
            if reader.family in LIBRARY_READERS:
                return None   # an anchor reading the buffer (a second convolution): it gets it contiguous
            prefix = ("node", reader.name, "operand", j)
            mapped = _remap(gen, prefix, v, shape, order, sizes)
            if mapped is None:
                return None
            views.append((prefix, *mapped))
    return BufferLayout(node.name, order, tuple(views))


def relayout(gen: Generalized, layouts: tuple[BufferLayout, ...]) -> Generalized:
    """`gen` with every reader view of the `layouts`' buffers indexing them by their physical strides."""
    new = {prefix: (conc, sym) for lay in layouts for prefix, conc, sym in lay.views}
    if not new:
        return gen
    nodes = []
    for n in gen.graph.nodes:
        ops = [replace(v, strides=new[("node", n.name, "operand", j)][0])
               if ("node", n.name, "operand", j) in new else v for j, v in enumerate(n.operands)]
        nodes.append(replace(n, operands=tuple(ops)) if ops != list(n.operands) else n)
    exprs = [(p, e) for p, e in gen.exprs if not (len(p) == 6 and p[:4] in new and p[4] == "strides")]
    for prefix, (_, sym) in new.items():
        exprs += [(prefix + ("strides", k), e) for k, e in enumerate(sym) if not e.is_constant]
    return replace(gen, graph=replace(gen.graph, nodes=tuple(nodes)), exprs=tuple(exprs))


# --- mapping one view ------------------------------------------------------------------------------------------

def _dim_exprs(gen: Generalized, node: Conv) -> list[SizeExpr]:
    """Each dim of the convolution's output as the generated readers name it: the size expression of the first view
    that reads that dim one to one (the fit names a derived size by the input dim equal to it, where one is), else
    the convolution's derived dim (what the library computes on the host)."""
    out = [SizeExpr(Fraction(1), ((Dim(-1, k, node.name), Fraction(1)),)) for k in range(len(node.out.shape))]
    shape, cs = tuple(node.out.shape), contiguous_strides(tuple(node.out.shape))
    found = [False] * len(shape)
    for reader in gen.graph.nodes:
        for j, v in enumerate(reader.operands):
            if v.base != node.name or v.offset:
                continue
            for k, (n, s) in enumerate(zip(v.shape, v.strides)):
                d = next((d for d in range(len(shape)) if cs[d] == s and shape[d] == n), None)
                if d is not None and not found[d]:
                    out[d] = gen.expr(("node", reader.name, "operand", j, "shape", k), n)
                    found[d] = True
    return out


def _remap(gen: Generalized, prefix: tuple, v: View, shape: tuple[int, ...], order: tuple[int, ...],
           sizes: list[SizeExpr]) -> tuple[tuple[int, ...], tuple[SizeExpr, ...]] | None:
    """(concrete, symbolic) strides of view `v` over a buffer of logical `shape` stored in `order`, or None where a
    view dim is not a whole run of adjacent dims (adjacent in both orders) nor a part of one dim."""
    if v.offset != 0:
        return None
    cs = contiguous_strides(shape)
    position = {d: i for i, d in enumerate(order)}
    phys_c = [0] * len(shape)
    phys_s: list[SizeExpr | None] = [None] * len(shape)
    acc, sym = 1, const(1)
    for d in reversed(order):
        phys_c[d], phys_s[d] = acc, sym
        acc, sym = acc * shape[d], product([sym, sizes[d]])
        if sym is None:
            return None
    logical_s = [product(sizes[d + 1:]) if d + 1 < len(shape) else const(1) for d in range(len(shape))]
    conc, syms = [], []
    for k, (n, s) in enumerate(zip(v.shape, v.strides)):
        expr = gen.expr(prefix + ("strides", k), s)
        if s == 0 or n == 1:
            shape_expr = gen.expr(prefix + ("shape", k), n)
            if n == 1 and not shape_expr.is_constant:
                return None   # size 1 at the traced sizes only: which dims it reads elsewhere is unknown
            conc.append(s)
            syms.append(expr)
            continue
        if s < 0:
            return None
        d = next(d for d in range(len(shape)) if cs[d] <= s)
        if s % cs[d]:
            return None
        if n * s <= cs[d] * shape[d]:   # within dim d: a whole dim or part of a split one
            ratio = const(1) if s == cs[d] else quotient(expr, logical_s[d]) if logical_s[d] is not None else None
            if ratio is None or not is_whole(ratio):
                return None
            conc.append(phys_c[d] * s // cs[d])
            syms.append(product([phys_s[d], ratio]))
            continue
        first = next((e for e in range(d, -1, -1) if prod(shape[e:d + 1]) == n), None)
        if s != cs[d] or first is None or any(position[e + 1] != position[e] + 1 for e in range(first, d)):
            return None   # a merge of dims the new order separates (or a run that is not whole dims)
        conc.append(phys_c[d])
        syms.append(phys_s[d])
    if any(e is None for e in syms) or not _agrees(v, tuple(conc), shape, order):
        return None
    return tuple(conc), tuple(syms)


def _agrees(v: View, strides: tuple[int, ...], shape: tuple[int, ...], order: tuple[int, ...]) -> bool:
    """Whether the new strides address the same elements as the old at the traced sizes (a sample of indices)."""
    cs = contiguous_strides(shape)
    physical_shape = tuple(shape[d] for d in order)
    ps = dict(zip(order, contiguous_strides(physical_shape)))
    rng = random.Random(0)
    picks = [tuple(n - 1 for n in v.shape), (0,) * len(v.shape)]
    picks += [tuple(rng.randrange(n) for n in v.shape) for _ in range(64)]
    for idx in picks:
        flat = sum(i * s for i, s in zip(idx, v.strides))
        coords = [(flat // cs[d]) % shape[d] for d in range(len(shape))]
        if sum(c * ps[d] for d, c in enumerate(coords)) != sum(i * s for i, s in zip(idx, strides)):
            return False
    return True
