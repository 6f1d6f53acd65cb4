"""Pointwise expression trees: what one output element of a pointwise node computes.

Leaves are loads of the node's operands (each a View already broadcast to the node's shape), constants
and iteration indices; inner nodes are ops from UNARY/BINARY/TERNARY with a result dtype. Codegen renders
a tree to `tl.*` text; FLOPs are counted from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

# op name -> FLOPs per element (transcendentals count as one; comparisons and selects as zero).
UNARY = {"neg": 1, "abs": 1, "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log1p": 1, "sqrt": 1,
         "rsqrt": 1, "reciprocal": 1, "sin": 1, "cos": 1, "tan": 1, "tanh": 1, "erf": 1, "sigmoid": 1,
         "relu": 1, "floor": 1, "ceil": 1, "round": 1, "trunc": 1, "sign": 1, "not": 0, "isnan": 0,
         "isinf": 0, "square": 1}
BINARY = {"add": 1, "sub": 1, "mul": 1, "div": 1, "pow": 1, "max": 1, "min": 1, "fmod": 1,
          "remainder": 1, "atan2": 1, "and": 0, "or": 0, "xor": 0, "eq": 0, "ne": 0, "lt": 0, "le": 0,
          "gt": 0, "ge": 0, "floordiv": 1, "truncdiv": 1}
TERNARY = {"where": 0}
CAST = "cast"


@dataclass(frozen=True)
class Load:
    """Element of operand `operand` at the current index (its View maps the index to memory).

    `gather = (stride, expr)` adds `expr · stride` elements to the View's address: an indirect load
    (torch.gather, embedding, index_select); the View has stride 0 on the gathered axes.
    """

    operand: int
    dtype: str
    gather: tuple[int, Expr] | None = None
    valid: Expr | None = None  # read only where this is true (0 elsewhere): concatenation, padding


@dataclass(frozen=True)
class Const:
    value: float | int | bool
    dtype: str


@dataclass(frozen=True)
class Index:
    """The iteration index along `axis` of the node's output, times `step`, plus `start` (arange)."""

    axis: int
    dtype: str
    start: int = 0
    step: int = 1


@dataclass(frozen=True)
class Op:
    op: str
    args: tuple[Expr, ...]
    dtype: str

    def __post_init__(self) -> None:
        arity = {**{k: 1 for k in UNARY}, **{k: 2 for k in BINARY}, **{k: 3 for k in TERNARY}, CAST: 1}
        if self.op not in arity:
            raise ValueError(f"unknown pointwise op {self.op!r}")
        if len(self.args) != arity[self.op]:
            raise ValueError(f"{self.op} takes {arity[self.op]} arguments, got {len(self.args)}")


Expr = Union[Load, Const, Index, Op]  # noqa: UP007 (a runtime alias: isinstance() and py3.10 need Union here)


def flops_per_element(expr: Expr) -> int:
    """Arithmetic operations per output element (casts, selects and comparisons are free)."""
    if isinstance(expr, Op):
        own = UNARY.get(expr.op, BINARY.get(expr.op, 0))
        return own + sum(flops_per_element(a) for a in expr.args)
    if isinstance(expr, Load) and expr.gather is not None:
        return flops_per_element(expr.gather[1])
    return 0


def loads(expr: Expr) -> set[int]:
    """Operand indices the expression reads."""
    if isinstance(expr, Load):
        inner = loads(expr.gather[1]) if expr.gather else set()
        valid = loads(expr.valid) if expr.valid is not None else set()
        return {expr.operand} | inner | valid
    if isinstance(expr, Op):
        return set().union(*(loads(a) for a in expr.args))
    return set()


def render(expr: Expr) -> str:
    """A readable infix form, for `kerntailor inspect` (codegen renders its own tl.* text)."""
    if isinstance(expr, Load):
        text = f"in{expr.operand}"
        if expr.gather:
            text = f"in{expr.operand}[+{render(expr.gather[1])}*{expr.gather[0]}]"
        if expr.valid is not None:
            text = f"{text} if {render(expr.valid)}"
        return text
    if isinstance(expr, Const):
        return repr(expr.value)
    if isinstance(expr, Index):
        base = f"i{expr.axis}"
        if expr.step != 1:
            base = f"{base}*{expr.step}"
        return f"({base}+{expr.start})" if expr.start else base
    symbols = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">",
               "ge": ">=", "eq": "==", "ne": "!=", "and": "&", "or": "|"}
    if expr.op in symbols:
        a, b = expr.args
        return f"({render(a)} {symbols[expr.op]} {render(b)})"
    if expr.op == CAST:
        return f"{expr.dtype}({render(expr.args[0])})"
    return f"{expr.op}({', '.join(render(a) for a in expr.args)})"
