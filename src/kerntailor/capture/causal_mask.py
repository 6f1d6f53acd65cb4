"""A proof that an attention mask computed in the graph is exactly the causal pattern (key j seen by row i iff j <= i).

Written-out causal attention builds its mask in forward() from iota / arange and a comparison:
`torch.triu(torch.ones(T, T, dtype=bool), 1)`, `torch.ones(T, T).tril() == 0`, `arange(T)[None] <= arange(T)[:, None]`
all lower to a few pointwise nodes over `iota` nodes, e.g. (j - i) >= 1. Where rewrite_attention.py can show that the
mask keeps exactly the keys j <= i of row i, the Attention node becomes `causal=True` with no mask operand: the flash
kernel skips the key blocks above the diagonal (half the work) and reads no T x T mask.

The proof is symbolic over the mask view's last two coordinates (i, j), not a look at values at one size:
- an integer value is a linear form a·i + b·j + c (from Index leaves, sums and differences, products by constants);
- a boolean or other value is piecewise constant on one half-plane a·i + b·j + c >= 0 (a comparison of two linear
  forms), kept through not / and / or / == / where / casts of constants;
- the keep set (the mask where fill_on is False, its negation where fill_on is True) must be, over *all* integers
  i, j, the half-plane i - j >= 0: g·i - g·j + c >= 0 with g > 0 and 0 <= c < g. It then holds at every size, so a
  diagonal that moves with the sizes (tril(ones(Lq, Lk), Lk - Lq), bottom-right aligned) is proved only where its
  offset is 0 at this capture; capture.py drops the proof when the variants disagree (the graphs must agree anyway).
Views between the nodes are followed only where they decompose exactly (each view axis steps one axis of the
producer, no carry over the view's whole range); an operand that is a graph input or buffer (MinGPT's registered
tril, a mask passed to forward) is never proved: its values can change after capture (a state_dict load), so it
stays an operand. An additive mask is never proved either: s + -inf is NaN where s is NaN or +inf, where the causal
kernel drops the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kerntailor.ir.expr import CAST, Const, Index, Load, Op
from kerntailor.ir.nodes import Graph, Pointwise
from kerntailor.ir.types import View, contiguous_strides

INTS = {"i64": 63, "i32": 31, "i16": 15, "i8": 7}   # signed integer dtypes and their magnitude bits
COMPARE = ("lt", "le", "gt", "ge")
MAX_DEPTH = 32   # mask expressions are a handful of nodes deep; anything deeper is not one


class NotProved(Exception):
    """The expression is outside what the proof follows; the mask stays an operand."""


@dataclass(frozen=True)
class Lin:
    """The integer a·i + b·j + c."""

    a: int
    b: int
    c: int

    def __add__(self, other: Lin) -> Lin:
        return Lin(self.a + other.a, self.b + other.b, self.c + other.c)

    def scaled(self, k: int) -> Lin:
        return Lin(self.a * k, self.b * k, self.c * k)


ALWAYS = Lin(0, 0, 0)   # the half-plane 0 >= 0


@dataclass(frozen=True)
class Piece:
    """`yes` where a·i + b·j + c >= 0 (`where`), `no` elsewhere; a constant where yes == no (where ALWAYS)."""

    where: Lin
    yes: bool | int | float
    no: bool | int | float


def proves_causal(graph: Graph, mask: View, fill_on: bool | None) -> bool:
    """Whether the mask view `mask` (..., Lq, Lk) of a masked_fill (fill_on True: masked where True) or a
    where(m, s, -inf) (fill_on False) keeps exactly the keys j <= i of row i at every (batch, head)."""
    if fill_on is None or len(mask.shape) < 2:
        return False
    if any(s != 1 and st != 0 for s, st in zip(mask.shape[:-2], mask.strides[:-2])):
        return False   # the mask may differ between batches or heads
    frame = {len(mask.shape) - 2: Lin(1, 0, 0), len(mask.shape) - 1: Lin(0, 1, 0)}
    try:
        value = _load(graph, mask, frame, 0)
    except NotProved:
        return False
    if not isinstance(value, Piece) or {value.yes, value.no} != {True, False}:
        return False
    keeps_on = (value.yes is True) != fill_on   # whether the half-plane is the keep set (else its complement)
    keep = value.where if keeps_on else _complement(value.where)
    g = keep.a
    return g > 0 and keep.b == -g and 0 <= keep.c < g


def _complement(h: Lin) -> Lin:
    """not (h >= 0) over the integers: -h - 1 >= 0."""
    return Lin(-h.a, -h.b, -h.c - 1)


# --- following views --------------------------------------------------------------------------------------------

def _load(graph: Graph, view: View, frame: dict[int, Lin], depth: int) -> Lin | Piece:
    """The value `view` reads where its axis a is at frame[a] (axes absent from frame: stride 0 or size 1)."""
    if depth > MAX_DEPTH:
        raise NotProved("too deep")
    try:
        node = graph.node(view.base)
    except KeyError:
        raise NotProved(f"{view.base} is a graph input") from None
    if not isinstance(node, Pointwise):
        raise NotProved(f"{node.name} is a {node.family} node")
    return _eval(graph, node, node.expr, _producer_frame(view, node.out.shape, frame), depth + 1)


def _producer_frame(view: View, shape: tuple[int, ...], frame: dict[int, Lin]) -> dict[int, Lin]:
    """The producer's index along each of its axes as a linear form, where `view` addresses its buffer (row-major,
    `shape`) exactly axis by axis: each stepping view axis steps one producer axis, and the offset plus the view's
    whole range stays inside that axis (no carry into the next), so the address decomposes uniquely."""
    cs = contiguous_strides(shape)
    start, rest = [], view.offset
    for s, st in zip(shape, cs):
        q, rest = divmod(rest, st) if s > 1 else (0, rest)
        start.append(q)
    if rest != 0 or any(not 0 <= q < s for q, s in zip(start, shape)):
        raise NotProved("offset outside the producer")
    lo, hi = list(start), list(start)
    index = [Lin(0, 0, q) for q in start]
    for a, (size, st) in enumerate(zip(view.shape, view.strides)):
        if size == 1 or st == 0:
            continue
        if a not in frame:
            raise NotProved(f"view axis {a} steps the producer but is not a mask coordinate")
        p = next((p for p in range(len(shape)) if shape[p] > 1 and cs[p] == abs(st)), None)
        if p is None:
            raise NotProved(f"stride {st} steps no single axis of {shape}")
        sign = 1 if st > 0 else -1
        index[p] = index[p] + frame[a].scaled(sign)
        lo[p] += min(0, sign * (size - 1))
        hi[p] += max(0, sign * (size - 1))
    if any(lo[p] < 0 or hi[p] >= shape[p] for p in range(len(shape))):
        raise NotProved("the view's range carries across the producer's axes")
    return {p: index[p] for p in range(len(shape)) if shape[p] > 1 or index[p] != Lin(0, 0, 0)}


# --- evaluating one expression ----------------------------------------------------------------------------------

def _eval(graph: Graph, node: Pointwise, e, frame: dict[int, Lin], depth: int) -> Lin | Piece:
    if isinstance(e, Const):
        return _const(e.value, e.dtype)
    if isinstance(e, Index):
        if e.dtype not in INTS:
            raise NotProved("a floating-point index")
        return _checked(frame.get(e.axis, Lin(0, 0, 0)).scaled(e.step) + Lin(0, 0, e.start), node, e.dtype)
    if isinstance(e, Load):
        if e.gather is not None or e.valid is not None:
            raise NotProved("an indirect or guarded load")
        return _load(graph, node.operands[e.operand], frame, depth)
    if not isinstance(e, Op):
        raise NotProved(f"{type(e).__name__}")
    args = [_eval(graph, node, a, frame, depth) for a in e.args]
    if e.op == CAST:
        return _cast(args[0], e.dtype, node)
    if e.op in ("add", "sub", "mul") and e.dtype in INTS and all(isinstance(a, Lin) or _int_const(a) for a in args):
        return _checked(_linear(e.op, *(_as_lin(a) for a in args)), node, e.dtype)
    if e.op in COMPARE and all(isinstance(a, Lin) or _int_const(a) for a in args):
        return _compare(e.op, *(_as_lin(a) for a in args))
    if any(isinstance(a, Lin) for a in args):
        raise NotProved(f"{e.op} of a linear form")
    return _piecewise(e.op, args, e.dtype)


def _const(value, dtype: str) -> Piece:
    if dtype == "bool":
        v = bool(value)
    elif dtype in INTS:
        if isinstance(value, float) and not value.is_integer():
            raise NotProved("a fractional integer constant")
        v = int(value)
    else:
        v = float(value)
        if math.isfinite(v) and (not v.is_integer() or abs(v) > 2 ** 11):
            raise NotProved("a float constant that may round")   # exact in fp16 / bf16 / fp32 / fp64 below this
    return Piece(ALWAYS, v, v)


def _int_const(v) -> bool:
    return isinstance(v, Piece) and v.where == ALWAYS and type(v.yes) is int


def _as_lin(v) -> Lin:
    return v if isinstance(v, Lin) else Lin(0, 0, v.yes)


def _linear(op: str, x: Lin, y: Lin) -> Lin:
    if op == "add":
        return x + y
    if op == "sub":
        return x + y.scaled(-1)
    if x.a == x.b == 0:
        return y.scaled(x.c)
    if y.a == y.b == 0:
        return x.scaled(y.c)
    raise NotProved("a product of two coordinates")


def _checked(v: Lin, node: Pointwise, dtype: str) -> Lin:
    """`v`, where it cannot overflow `dtype` over the node's index range (the mask's coordinates stay below it)."""
    bound = max(node.out.shape or (1,))
    if (abs(v.a) + abs(v.b)) * bound + abs(v.c) >= 2 ** INTS.get(dtype, 0):
        raise NotProved("may overflow")
    return v


def _compare(op: str, x: Lin, y: Lin) -> Piece:
    """x op y as a half-plane over the integers."""
    d = x + y.scaled(-1)
    half = {"ge": d, "gt": d + Lin(0, 0, -1), "le": d.scaled(-1), "lt": d.scaled(-1) + Lin(0, 0, -1)}[op]
    if half.a == half.b == 0:
        return Piece(ALWAYS, half.c >= 0, half.c >= 0)
    return Piece(half, True, False)


def _cast(v, dtype: str, node: Pointwise):
    if isinstance(v, Lin):
        if dtype not in INTS:
            raise NotProved("a coordinate cast to a non-integer type")
        return _checked(v, node, dtype)
    return Piece(v.where, _convert(v.yes, dtype), _convert(v.no, dtype))


def _convert(x, dtype: str):
    if dtype == "bool":
        return bool(x)
    if dtype in INTS:
        if isinstance(x, float) and not (math.isfinite(x) and x.is_integer()):
            raise NotProved("a float cast to an integer")
        return int(x)
    if isinstance(x, int) and abs(x) > 2 ** 11:
        raise NotProved("an integer that may round in a 16-bit float")
    return float(x)


def _piecewise(op: str, args: list[Piece], dtype: str) -> Piece:
    """op over piecewise-constant values that share one half-plane (or are constant)."""
    planes = {a.where for a in args if a.where != ALWAYS}
    if len(planes) > 1:
        raise NotProved("two different half-planes")
    where = planes.pop() if planes else ALWAYS
    yes = _apply(op, [a.yes for a in args], dtype)
    no = _apply(op, [a.no for a in args], dtype)
    return Piece(ALWAYS, yes, yes) if yes == no else Piece(where, yes, no)


def _apply(op: str, xs: list, dtype: str):
    """op over constants, only where the result is exact in any dtype: logic, comparisons, selects."""
    if op == "not" and dtype == "bool":
        return not xs[0]
    if op in ("and", "or", "xor") and dtype == "bool":
        a, b = bool(xs[0]), bool(xs[1])
        return {"and": a and b, "or": a or b, "xor": a != b}[op]
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        a, b = xs
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
    if op == "where":
        return _convert(xs[1] if xs[0] else xs[2], dtype)
    raise NotProved(f"{op} of constants")
