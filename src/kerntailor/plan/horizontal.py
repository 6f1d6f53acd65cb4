"""Horizontal products: matrix products of one left operand whose outputs go separate ways (a transformer's Q, K and
V projections) become one GEMM kernel.

    q = x @ Wq^T,  k = x @ Wk^T,  v = x @ Wv^T     (x: (B*T, D); each output read by a different consumer)

Three kernels read x three times. One kernel whose grid covers the concatenated N tiles of every product reads it
once from HBM: each program computes an ordinary BLOCK_M x BLOCK_N tile of one product (its column tile index says
which, codegen/gemm/horizontal.py), and the tile-swizzle groups (GROUP_M rows of tiles, swept column by column over
all the products) run the programs that share an A row block together, so its tiles come from L2. On
llama_decoder_block (bf16, x 4096 x 2048, Wq 2048 x 2048, Wk and Wv likewise) the three kernels planned 125.8 MB,
the one kernel 92.3 MB (predicted from the plan's bytes: x read once instead of three times).

Groups merge when
- each is a generated matmul group of one product (no dual pair: plan/dual.py, no row tail, no prologue) whose
  first node is a non-batched Matmul, neither M nor N 1 (a matrix-vector product keeps its GEMV kernel, codegen/gemm:
  the horizontal writer builds tl.dot tiles only, 15/16 of a 16-wide side padding there);
- their products read the same A view (base, shape, strides, offset), with equal M and K, and A and every B are of
  one dtype (one tl.dot path and precision for the kernel). N may differ (GQA's k and v are narrower than q);
- no member of one reads a member of another (their epilogues stay apart: each product keeps its own pointwise
  epilogue, a bias or an activation, computed in its own branch of the kernel and stored as before);
- the merge creates no cycle between groups (the planner's can_merge; a cut node stays apart from what it reads).

Every output stays an ordinary stored buffer: an attention's RoPE prologue reads q and k from them as before.

At most MAX_PRODUCTS products a kernel. Each program holds one accumulator whatever the count (unlike a dual
group's two), so the limit is not registers: the kernel body carries one K loop and epilogue per product (compile
time and code size grow with the count), and QKV is three; a fourth covers a gated projection beside them. More
products of one A (a mixture of experts' experts, each a Linear) form several kernels of up to four.

A dual pair (plan/dual.py) is planned first and wins over a horizontal merge: its second product is never written
nor read back (M x N twice), where a horizontal merge saves one read of A (M x K). A third product of the pair's A
stays its own group, or merges with other single products of that A.
"""

from __future__ import annotations

from collections.abc import Sequence

from kerntailor.ir.nodes import Graph, Matmul, Node

MAX_PRODUCTS = 4


def horizontal_key(graph: Graph, nodes: Sequence[Node]) -> tuple | None:
    """What the products of one horizontal group agree on (A's view, M, K, the operand dtype), for the matmul group of
    `nodes`; None where it cannot join one (its first node is no single non-batched product, or its operands'
    dtypes differ)."""
    mm = nodes[0]
    if not isinstance(mm, Matmul) or mm.batch or any(isinstance(n, Matmul) for n in nodes[1:]) or 1 in (mm.m, mm.n):
        return None
    dtypes = {graph.buffer_type(v.base).dtype for v in mm.operands[:2]}
    if len(dtypes) != 1:
        return None
    return (mm.operands[0], mm.m, mm.k, dtypes.pop())


def independent(first: Sequence[Node], second: Sequence[Node]) -> bool:
    """Whether no node of either sequence reads a node of the other."""
    for reader, other in ((first, second), (second, first)):
        names = {n.name for n in other}
        if any(op.base in names for n in reader for op in n.operands):
            return False
    return True


def branches(nodes: Sequence[Node]) -> tuple[tuple[Node, ...], ...] | None:
    """A horizontal group's members per product (the product first, then the epilogue members computed from it, in
    the order of `nodes`); None for any other group: one product, or a dual group (a member computed from two)."""
    products = [n for n in nodes if isinstance(n, Matmul)]
    if len(products) < 2:
        return None
    owner: dict[str, int] = {p.name: i for i, p in enumerate(products)}
    for n in nodes:
        if n.name in owner:
            continue
        found = {owner[op.base] for op in n.operands if op.base in owner}
        if len(found) != 1:
            return None    # computed from two products (a dual epilogue), or from none in the group
        owner[n.name] = found.pop()
    return tuple(tuple(n for n in nodes if owner[n.name] == i) for i in range(len(products)))
