"""A concatenation's sizes on the host: its output size along its axis, and its inner boundaries, as sums.

torch.cat([past, new], dim=2) of a KV cache (B, kvh, L, d) and one token (B, kvh, 1, d) has L + 1 rows, which no
monomial of input dims is; everything after it (its strides, L + 1 times d; repeat_kv's expansion; attention's
key count) is then not one either. capture/generalize.py makes such a sum a derived dim of its own
(`Dim(-1, axis, cat)`; an inner boundary, where operand k - 1 ends, `Dim(-1, axis, cat, end=k)`), so those sizes
are monomials in it, and this module computes it on the host: the sum of the operands' sizes along the axis,
each as fitted (`("node", cat, "cat_sizes", j)`), in forward() and in the op, before any buffer is allocated:

    d4 = d2 + 1        # past_len + 1: cat0's size along axis 2

Only the sums the kernels use (gen.dims, so codegen's host_names calls them d0, d1, ... like the input dims; the
names here only claim them for this family) are computed; a sum the variants showed to be a monomial of input dims
(a concatenation of equal parts) is that monomial, as before.
"""

from __future__ import annotations

from fractions import Fraction

from kerntailor.capture.generalize import Dim, Generalized
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.nodes import Node


def derived_host_names(gen: Generalized) -> dict[Dim, str]:
    """Host variable names of the concatenation sums the problem's sizes use."""
    return {d: f"{d.node}_n{d.axis}" + (f"_{d.end}" if d.end else "") for d in gen.dims
            if d.node and getattr(gen.graph.node(d.node), "cat_sizes", ())}


def host_size_lines(gen: Generalized, node: Node, dim: Dim, name: str, sizes: SizeArgs) -> list[str]:
    """The host line setting `name` to concatenation `node`'s sum `dim`: its output size along its axis, or (where
    `dim.end` is k) the sum of its first k operands' sizes."""
    count = dim.end or len(node.cat_sizes)
    terms = [sizes.host(gen.expr(("node", node.name, "cat_sizes", j), node.cat_sizes[j])) for j in range(count)]
    constant = sum((Fraction(t) for t in terms if t.lstrip("-").isdigit()), Fraction(0))
    parts = [t if t.isidentifier() else f"({t})" for t in terms if not t.lstrip("-").isdigit()]
    if constant or not parts:
        parts.append(str(constant))
    return [f"{name} = {' + '.join(parts)}"]
