"""Dual products: two matrix products that share their left operand become one GEMM kernel (horizontal fusion).

SwiGLU's `silu(x @ Wg^T) * (x @ Wu^T)` (GeGLU's `gelu(a) * b`, a gated product, `x @ W1 + x @ W2`): the planner
puts the epilogue that reads both products into the first product's group, and the second product is a group of
its own whose output is written, then read back by that epilogue. Merged, one kernel keeps two fp32 accumulators,
loads each A tile once per K step for two `tl.dot`s (codegen/gemm), and writes only what the epilogue stores.
On llama_decoder_block (4096 x 2048 @ 2048 x 5632, fp32) the pair moves ~250 MB instead of ~436 MB (predicted
from the plan's bytes).

Two groups pair when
- each is a generated matmul group (no prologue, no row tail) whose first node is a non-batched Matmul;
- the two products read the same A view (base, shape, strides, offset), their M, N, K agree, and their A and B
  operands are of one dtype;
- one group's members read the other's (the epilogue of one needs the other product: without that the pair shares
  only A, and the saving is one read of A, not a written and re-read product: QKV projections stay apart);
- the merge creates no cycle between groups (the planner's can_merge).
A member of the second group that something outside the merged group reads is still written: it becomes a stored
output of the merged kernel (no worse than before: A is read once, the product is written as it was).

Only two: a third accumulator (3 x 128 x 128 fp32 over 256 threads: 192 registers a thread before the operand
tiles) does not fit a register file without spills or much smaller tiles, and the patterns that motivate it (QKV)
read none of each other's products; three equal-N products are better served by concatenating the weights.
"""

from __future__ import annotations

from collections.abc import Sequence

from kerntailor.ir.nodes import Graph, Matmul, Node


def dual_product(graph: Graph, first: Sequence[Node], second: Sequence[Node]) -> bool:
    """Whether the matmul group of nodes `second` can join that of `first` as its second product (module
    docstring; the caller checks families, tails and cycles). `first` must read a member of `second`."""
    a, b = first[0], second[0]
    if not (isinstance(a, Matmul) and isinstance(b, Matmul)) or a.batch or b.batch:
        return False
    if any(isinstance(n, Matmul) for n in list(first[1:]) + list(second[1:])):
        return False   # already a dual group: two products at most
    if a.operands[0] != b.operands[0] or (a.m, a.n, a.k) != (b.m, b.n, b.k):
        return False
    dtypes = {graph.buffer_type(v.base).dtype for v in a.operands[:2] + b.operands[:2]}
    if len(dtypes) != 1 or a.out.dtype != b.out.dtype:
        return False
    names = {n.name for n in second}
    return any(op.base in names for n in first for op in n.operands)


def products(nodes: Sequence[Node]) -> list[Matmul]:
    """The matrix products among a group's `nodes` (one, or two in a dual group), in order."""
    return [n for n in nodes if isinstance(n, Matmul)]
