"""Shapes of expressions a fused writer computes differently from how they are written: tanh(softplus(x)) from
one exp (Mish), a square for Welford's variance, a product whose rounding an FMA could change."""

from __future__ import annotations

from kerntailor.ir.expr import Const, Load, Op
from kerntailor.ir.nodes import Node, Pointwise
from kerntailor.ir.types import View, contiguous_strides


def has_op(expr, ops: tuple[str, ...]) -> bool:
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Op):
            if e.op in ops:
                return True
            stack += list(e.args)
    return False


def is_op(expr, op: str) -> bool:
    return isinstance(expr, Op) and expr.op == op


def squared(node: Node) -> str | None:
    """The member a pointwise node squares (x·x, square(x), x ** 2), or None."""
    if not isinstance(node, Pointwise):
        return None
    e = node.expr
    if not isinstance(e, Op):
        return None
    if e.op == "mul" and all(isinstance(a, Load) and a.gather is None and a.valid is None for a in e.args):
        a, b = (node.operands[x.operand] for x in e.args)
        if a == b and a.base and tuple(a.strides) == contiguous_strides(tuple(a.shape)) and not a.offset:
            return a.base
        return None
    if e.op in ("square", "pow") and isinstance(e.args[0], Load) and e.args[0].gather is None \
            and e.args[0].valid is None:
        if e.op == "pow" and not (isinstance(e.args[1], Const) and float(e.args[1].value) == 2.0):
            return None
        a = node.operands[e.args[0].operand]
        if tuple(a.strides) == contiguous_strides(tuple(a.shape)) and not a.offset:
            return a.base
    return None


def row_major(view) -> bool:
    """`view` reads its buffer in row-major order from its start, whatever the strides of its size-1 axes (a
    reshape of a contiguous buffer: InstanceNorm's (N, C, H, W) read as (1, N·C, H, W) has stride 1 on the 1)."""
    return all(st == c for s, st, c in zip(view.shape, view.strides, contiguous_strides(tuple(view.shape))) if s != 1)


def unit_dims_only(view, producer) -> bool:
    """A keepdim view (size-1 axes added or removed) of a contiguous producer."""
    kept = [(s, st) for s, st in zip(view.shape, view.strides) if s != 1]
    expected = [(s, st) for s, st in zip(producer.out.shape, contiguous_strides(producer.out.shape)) if s != 1]
    return kept == expected


def member_read(space, view: View, level: str) -> Node | None:
    """The pointwise member `view` reads as it is (same shape, contiguous), at `level`; else None."""
    if view.base not in space.members:
        return None
    node = space.gen.graph.node(view.base)
    if not isinstance(node, Pointwise) or space.level[node.name] != level or view.offset \
            or view.shape != node.out.shape or tuple(view.strides) != contiguous_strides(tuple(view.shape)):
        return None
    return node


def softplus_of(space, node: Node) -> tuple[Node, int] | None:
    """For tanh(softplus(x)), softplus(x) = log1p(exp(x)) or where(x > T, x, log1p(exp(x))) with T >= 10
    (tanh is 1.0 in fp32 past 10 either way): the exp node and the operand that reads x. Else None."""
    def plain(e, op: str, arity: int = 1) -> bool:
        return is_op(e, op) and all(isinstance(a, Load) and a.gather is None and a.valid is None
                                    for a in e.args[:arity])

    level = space.level[node.name]
    if not isinstance(node, Pointwise) or not plain(node.expr, "tanh"):
        return None
    sp = member_read(space, node.operands[node.expr.args[0].operand], level)
    if sp is None:
        return None
    x_view = None
    if plain(sp.expr, "where", 3):
        c, a, b = (sp.operands[x.operand] for x in sp.expr.args)
        cond = member_read(space, c, level)
        if cond is None or not plain(cond.expr, "gt") or not isinstance(cond.expr.args[1], Const) \
                or cond.operands[cond.expr.args[0].operand] != a:
            return None
        threshold = space.gen.expr(("node", cond.name, "const", 2), cond.expr.args[1].value)
        if not threshold.is_constant or not float(cond.expr.args[1].value) >= 10.0:
            return None
        x_view, sp = a, member_read(space, b, level)
        if sp is None:
            return None
    if not plain(sp.expr, "log1p"):
        return None
    ex = member_read(space, sp.operands[sp.expr.args[0].operand], level)
    if ex is None or not plain(ex.expr, "exp"):
        return None
    j = ex.expr.args[0].operand
    if x_view is not None and ex.operands[j] != x_view:
        return None
    return ex, j


def live(space, outputs: list[Node]) -> set[str]:
    """The members some output needs (tanh(softplus(x)) needs only x's producer)."""
    graph, members = space.gen.graph, space.members
    found: set[str] = set()
    stack = [n.name for n in outputs]
    while stack:
        name = stack.pop()
        if name in found or name not in members:
            continue
        found.add(name)
        node = graph.node(name)
        softplus = softplus_of(space, node) if space.level.get(name) != "inline" else None
        if softplus is not None:
            stack.append(softplus[0].operands[softplus[1]].base)
        else:
            stack += [op.base for op in node.operands]
    return found
