"""A first fusion plan: partition the IR graph into groups, one kernel each.

Rules (in the spirit of Inductor's scheduler, simplified):
- an anchor (matmul, conv, attention, pool, scan) starts a group; pointwise nodes of its output shape
  that consume it join it as an epilogue;
- a reduction joins the group of its producer when that group iterates over the reduction's input
  shape (a pointwise prologue) or already reduces the same shape over the same axes (softmax's max and
  sum, a norm's mean and variance); pointwise nodes at the full or the reduced shape join it;
- pointwise nodes of the same shape chain into one group;
- no merge may create a cycle between groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from kerntailor.capture.cost import view_bytes
from kerntailor.ir.nodes import Graph, Node, Reduction

ANCHORS = ("matmul", "conv", "attention", "pool", "scan")


@dataclass(frozen=True)
class FusionGroup:
    name: str
    family: str                  # "pointwise" | "reduction" | one of ANCHORS
    nodes: tuple[str, ...]       # in topological order
    inputs: tuple[str, ...]      # buffers read from outside the group
    outputs: tuple[str, ...]     # buffers the group must write
    space: tuple[int, ...]       # iteration shape: output shape, or a reduction's full input shape
    reduce_axes: tuple[int, ...] = ()
    bytes_moved: int = 0         # what this kernel reads and writes, at least


@dataclass(frozen=True)
class Plan:
    groups: tuple[FusionGroup, ...]

    @property
    def bytes_moved(self) -> int:
        return sum(g.bytes_moved for g in self.groups)

    def group_of(self, node: str) -> FusionGroup:
        for g in self.groups:
            if node in g.nodes:
                return g
        raise KeyError(node)


@dataclass
class _Group:
    family: str
    nodes: list[Node]
    space: tuple[int, ...]
    axes: tuple[int, ...] = ()

    @property
    def reduced_numel(self) -> int:
        return prod(s for i, s in enumerate(self.space) if i not in self.axes)


def _accepts_pointwise(group: _Group, node: Node) -> bool:
    shape = node.out.shape
    if group.family == "pointwise":
        return shape == group.space
    if group.family == "reduction":
        return shape == group.space or node.out.numel == group.reduced_numel
    if group.family in ANCHORS:
        return shape == group.space
    return False


def _accepts_reduction(group: _Group, node: Reduction) -> bool:
    full = node.operands[0].shape
    if group.family == "pointwise":
        return group.space == full
    if group.family == "reduction":
        return group.space == full and group.axes == node.axes
    return False


def plan_fusion(graph: Graph) -> Plan:
    group_of: dict[str, _Group] = {}
    groups: list[_Group] = []
    ancestors: dict[str, set[str]] = {i.name: set() for i in graph.inputs}
    order = {n.name: i for i, n in enumerate(graph.nodes)}

    def creates_cycle(group: _Group, node: Node) -> bool:
        members = {n.name for n in group.nodes}
        for op in node.operands:
            if op.base in members:
                continue
            if ancestors.get(op.base, set()) & members:
                return True
        return False

    def can_merge(a: _Group, b: _Group) -> bool:
        """Whether two groups can become one without a path between them through a third."""
        members = {n.name for n in a.nodes} | {n.name for n in b.nodes}
        for g, other in ((a, b), (b, a)):
            other_names = {n.name for n in other.nodes}
            for n in g.nodes:
                for op in n.operands:
                    if op.base not in members and (ancestors.get(op.base, set()) & other_names):
                        return False
        return True

    for node in graph.nodes:
        ancestors[node.name] = set().union(*({op.base} | ancestors.get(op.base, set()) for op in node.operands))
        producers = []
        for op in node.operands:
            g = group_of.get(op.base)
            if g is not None and g not in producers:
                producers.append(g)
        target = None
        if node.family == "pointwise":
            # prefer joining anchors and reductions (epilogues), then pointwise chains
            for g in sorted(producers, key=lambda g: g.family == "pointwise"):
                if _accepts_pointwise(g, node) and not creates_cycle(g, node):
                    target = g
                    break
        elif node.family == "reduction":
            for g in producers:
                if _accepts_reduction(g, node) and not creates_cycle(g, node):
                    target = g
                    if g.family == "pointwise":
                        g.family, g.axes = "reduction", node.axes
                    break
        if target is not None:
            # horizontal merge: the other producers this node joins up (gelu's two branches of x)
            for g in producers:
                if g is target or g.family != "pointwise" or not _accepts_pointwise(target, g.nodes[-1]):
                    continue
                if can_merge(target, g):
                    target.nodes = sorted(target.nodes + g.nodes, key=lambda n: order[n.name])
                    for n in g.nodes:
                        group_of[n.name] = target
                    groups.remove(g)
        if target is None:
            if node.family == "reduction":
                target = _Group("reduction", [], node.operands[0].shape, node.axes)
            else:
                space = node.operands[0].shape if node.family == "scan" else node.out.shape
                target = _Group(node.family, [], space)
            groups.append(target)
        target.nodes.append(node)
        group_of[node.name] = target
    return Plan(tuple(_finish(graph, i, g) for i, g in enumerate(groups)))


def _finish(graph: Graph, index: int, group: _Group) -> FusionGroup:
    members = {n.name for n in group.nodes}
    consumers = graph.consumers()
    graph_outputs = {v.base for v in graph.outputs}
    inputs: list[str] = []
    read = 0
    for n in group.nodes:
        for op in n.operands:
            if op.base not in members and op.base not in inputs:
                inputs.append(op.base)
                read += min(view_bytes(op, graph.buffer_type(op.base).dtype), graph.buffer_type(op.base).nbytes)
    outputs = [n.name for n in group.nodes
               if n.name in graph_outputs or any(c not in members for c in consumers[n.name])]
    written = sum(graph.node(o).out.nbytes for o in outputs)
    return FusionGroup(f"k{index}", group.family, tuple(n.name for n in group.nodes), tuple(inputs),
                       tuple(outputs), group.space, group.axes, read + written)
