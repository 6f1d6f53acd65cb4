"""A linear layer on a 3-d input, seen at its product's 2-d shape: a graph rewrite after lowering, before the plan.

`nn.Linear` on (B, T, D) lowers to one 2-d product (B·T, D) @ (D, N) whose result the next op reads through a
reshape view (B, T, N). The plan joins a pointwise node to an anchor's group only at the anchor's own shape
(plan/fusion.py), so every epilogue of a transformer's linear layers (GELU, SwiGLU's gate, a residual add) became a
kernel of its own, writing and reading the product once more: a Llama block planned 14 kernels, SwiGLU's
activation alone 277 MB of them.

`flatten_product_rows` gives such a pointwise node the product's shape (M, N) with M = B·T: the same elements in
the same row-major order, so the node's buffer is the same bytes and every reader's view of it stays valid. It
applies where that changes nothing else:
- the graph has a product (a non-batched matmul of 2-d output), and the node reads a 2-d buffer (the product, its
  bias add, a node this rewrite already flattened) whole through the reshape (contiguous, offset 0, the node's
  shape);
- every operand view merges its leading axes into one (stride of each leading axis = stride of the next times its
  size; size-1 axes ignored): x of (B, T, N) read contiguously, a bias broadcast over (B, T), a buffer of (T, N)
  does *not* merge ((B, T) strides (0, N)) and keeps the node as it is;
- its expression reads no iteration index but the last axis (re-numbered), no gather and no masked load, and it is
  no concatenation (those carry index arithmetic of the old axes).
Chains follow: SwiGLU's silu, its product with the up projection, the residual add after the down projection all
become members of their products' groups.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from math import prod

from kerntailor.ir.expr import Expr, Index, Load, Op
from kerntailor.ir.nodes import Graph, Matmul, Pointwise, Reduction
from kerntailor.ir.types import TensorType, View


def flatten_product_rows(graph: Graph, only: Collection[str] | None = None) -> Graph:
    """`graph` with the pointwise readers of 2-d products at the products' shapes (module docstring); with `only`,
    no node outside it (capture_generalized's choice common to every variant: see `common_rows`)."""
    flat: set[str] = {n.name for n in graph.nodes if len(n.out.shape) == 2}
    if not any(isinstance(n, Matmul) and not n.batch and n.name in flat for n in graph.nodes):
        return graph
    nodes, changed = [], False
    for node in graph.nodes:
        new = _flattened(node, flat) if only is None or node.name in only else None
        if new is not None:
            if isinstance(new, Pointwise):
                flat.add(node.name)
            changed = True
            node = new
        nodes.append(node)
    return replace(graph, nodes=tuple(nodes)) if changed else graph


def flattened_rows(before: Graph, after: Graph) -> frozenset[str]:
    """The nodes flatten_product_rows reshaped between `before` and `after`."""
    shapes = {n.name: n.out.shape for n in before.nodes}
    return frozenset(n.name for n in after.nodes if shapes.get(n.name) != n.out.shape)


def common_rows(graphs: Sequence[Graph]) -> list[Graph]:
    """`graphs` (one per variant, not flattened) flattened at the nodes every variant can flatten. The choice depends
    on sizes: a size-1 axis merges with anything (a per-position bias of (T, N) read over a batch of 1 merges, over a
    batch of 2 it does not), and generalization needs one structure over all variants. Each variant's choice is
    intersected with the others' until none drops a node (a node reading a product through one that was dropped
    can drop out in turn)."""
    chosen: frozenset[str] | None = None
    while True:
        flat = [flatten_product_rows(g, chosen) for g in graphs]
        sets = [flattened_rows(g, f) for g, f in zip(graphs, flat)]
        common = frozenset.intersection(*sets) if sets else frozenset()
        if all(s == common for s in sets):
            return flat
        chosen = common


def _flattened(node, flat: set[str]) -> Pointwise | Reduction | None:
    if isinstance(node, Reduction):
        return _flattened_reduction(node, flat)
    shape = node.out.shape
    if not isinstance(node, Pointwise) or node.cat_sizes or len(shape) < 3:
        return None
    rows = prod(shape[:-1])
    if not any(_whole_reshape(op, shape, flat) for op in node.operands):
        return None
    views = [_merged(op, rows) for op in node.operands]
    if any(v is None for v in views):
        return None
    expr = _renumbered(node.expr, len(shape))
    if expr is None:
        return None
    return replace(node, operands=tuple(views), out=TensorType((rows, shape[-1]), node.out.dtype), expr=expr)


def _flattened_reduction(node: Reduction, flat: set[str]) -> Reduction | None:
    """A reduction over the last axis only of a flattened buffer, read whole, at (rows, N): same values in the same
    order (one per row), so its readers' views stay valid."""
    view = node.operands[0]
    shape = view.shape
    if len(shape) < 3 or node.axes != (len(shape) - 1,) or not _whole_reshape(view, shape, flat):
        return None
    rows = prod(shape[:-1])
    out = (rows, 1) if node.keepdim else (rows,)
    return replace(node, operands=(View.of(view.base, (rows, shape[-1])),) + node.operands[1:], axes=(1,),
                   out=TensorType(out, node.out.dtype))


def _whole_reshape(view: View, shape: tuple[int, ...], flat: set[str]) -> bool:
    return view.base in flat and view.shape == shape and view.is_contiguous   # a size-1 axis's stride is free


def _merged(view: View, rows: int) -> View | None:
    """`view` of shape (*lead, N) as a view of shape (rows, N), or None where its leading axes do not merge."""
    lead = [(size, stride) for size, stride in zip(view.shape[:-1], view.strides[:-1]) if size != 1]
    for (_, outer), (size, inner) in zip(lead, lead[1:]):
        if outer != inner * size:
            return None
    row_stride = lead[-1][1] if lead else 0
    return View(view.base, (rows, view.shape[-1]), (row_stride, view.strides[-1]), view.offset)


def _renumbered(expr: Expr, rank: int) -> Expr | None:
    """`expr` over (rows, N): an index along the last axis becomes axis 1; any other index, a gather or a masked
    load gives None."""
    if isinstance(expr, Index):
        return replace(expr, axis=1) if expr.axis == rank - 1 else None
    if isinstance(expr, Load):
        return expr if expr.gather is None and expr.valid is None else None
    if isinstance(expr, Op):
        args = [_renumbered(a, rank) for a in expr.args]
        return None if any(a is None for a in args) else replace(expr, args=tuple(args))
    return expr
