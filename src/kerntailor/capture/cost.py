"""FLOPs and bytes per IR node and for a whole graph (the floor's inputs)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from kerntailor.ir.nodes import Conv, Graph, Node
from kerntailor.ir.types import ITEMSIZE, View

MATRIX_FAMILIES = ("matmul", "conv", "attention", "recurrent")


@dataclass(frozen=True)
class Cost:
    flops: int          # arithmetic operations
    bytes_read: int     # distinct bytes read by this node if it ran alone
    bytes_written: int

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


def view_bytes(view: View, dtype: str) -> int:
    """Distinct bytes a view touches: broadcast (stride-0) axes are read once."""
    distinct = prod(s for s, st in zip(view.shape, view.strides) if st != 0)
    return distinct * ITEMSIZE[dtype]


def node_cost(node: Node, graph: Graph) -> Cost:
    read = 0
    seen: set[tuple] = set()
    for view in node.operands:
        key = (view.base, view.shape, view.strides, view.offset)
        if key in seen:
            continue
        seen.add(key)
        read += view_bytes(view, graph.buffer_type(view.base).dtype)
    return Cost(node.flops(), read, node.out.nbytes)


@dataclass(frozen=True)
class GraphCost:
    """The floor's inputs for a whole graph. The compulsory bytes come apart into reads and writes, since a
    GPU streams reads faster than it streams a copy (the floor charges each at its own measured rate)."""

    flops_matrix: int    # on matrix units (matmul, conv, attention)
    flops_vector: int    # everything else
    min_bytes_read: int      # every used input (and parameter) read once
    min_bytes_written: int   # every distinct output written once
    unfused_bytes: int   # what one kernel per node would move
    dtype: str           # the dtype that sets the compute rate
    matrix: bool         # whether the compute floor is on matrix units
    flops_conv_fp32: int = 0   # of flops_matrix, fp32 convolutions': cuDNN runs them on TF32 by PyTorch's default

    @property
    def flops(self) -> int:
        return self.flops_matrix + self.flops_vector

    @property
    def min_bytes(self) -> int:
        """The compulsory traffic: every used input read once + every output written once."""
        return self.min_bytes_read + self.min_bytes_written

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.min_bytes if self.min_bytes else float("inf")


def graph_cost(graph: Graph) -> GraphCost:
    costs = [node_cost(n, graph) for n in graph.nodes]
    matrix = [n for n in graph.nodes if n.family in MATRIX_FAMILIES]
    flops_matrix = sum(n.flops() for n in matrix)
    flops_vector = sum(n.flops() for n in graph.nodes if n.family not in MATRIX_FAMILIES)
    read = sum(_input_bytes(graph, i) for i in graph.inputs)
    written = sum(t.nbytes for v, t in _distinct_outputs(graph))
    if matrix:
        dtype = graph.buffer_type(matrix[0].operands[0].base).dtype
    else:
        floats = [i.type for i in graph.inputs if i.type.dtype in ("fp64", "fp32", "bf16", "fp16")]
        dtype = max(floats, key=lambda t: t.nbytes).dtype if floats else "fp32"
    conv_fp32 = sum(n.flops() for n in matrix
                    if isinstance(n, Conv) and graph.buffer_type(n.operands[0].base).dtype == "fp32")
    return GraphCost(flops_matrix, flops_vector, read, written, sum(c.bytes for c in costs), dtype, bool(matrix),
                     conv_fp32)


def _input_bytes(graph: Graph, inp) -> int:
    """What the graph must read of one input, at least: its widest view's distinct bytes, at most its size (0 if
    unused). A problem that reads one layer of a stacked KV cache (a `select` of the (layers, B, h, L, d) input, as
    profile's extracted groups do) reads that layer, not the stack: charging the stack put the floor of a correct
    cache append at 2.5x its real traffic, so that the referee would call its time "faster than physics"."""
    views = [v for n in graph.nodes for v in n.operands if v.base == inp.name]
    views += [v for v in graph.outputs if v.base == inp.name]
    if not views:
        return 0
    return min(inp.type.nbytes, max(view_bytes(v, inp.type.dtype) for v in views))


def _distinct_outputs(graph: Graph):
    seen = set()
    for view, ttype in zip(graph.outputs, graph.output_types):
        key = (view.base, view.shape, view.strides, view.offset)
        if key not in seen:
            seen.add(key)
            yield view, ttype
