"""Render IR expression trees to Triton (`tl.*`) source text.

Arithmetic runs in fp32 for bf16/fp16 values (loads upcast, stores round once), as Inductor does.
Functions without a `tl.*` form (tanh, log1p, expm1) call helpers kernel.py defines (codegen/helpers/math.py):
libdevice on a GPU, and under the Triton interpreter (which lacks libdevice) portable forms.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kerntailor.ir.expr import CAST, Const, Expr, Index, Load, Op

TL_DTYPES = {"fp64": "tl.float64", "fp32": "tl.float32", "bf16": "tl.bfloat16", "fp16": "tl.float16",
             "i64": "tl.int64", "i32": "tl.int32", "i16": "tl.int16", "i8": "tl.int8", "u8": "tl.uint8",
             "bool": "tl.int1"}
# Triton signature types for pointers to each dtype (KernelSource.signature).
PTR_TYPES = {"fp64": "*fp64", "fp32": "*fp32", "bf16": "*bf16", "fp16": "*fp16", "i64": "*i64",
             "i32": "*i32", "i16": "*i16", "i8": "*i8", "u8": "*u8", "bool": "*i1", "fp8e4nv": "*fp8e4nv",
             "fp8e4b8": "*fp8e4b8"}
FLOAT = ("fp64", "fp32", "bf16", "fp16")


def compute_dtype(dtype: str) -> str:
    """The dtype arithmetic runs in: fp32 for 16-bit floats."""
    return "fp32" if dtype in ("bf16", "fp16") else dtype


# kernel.py's module-level lines before any helper (codegen/helpers/): whether it runs under the interpreter.
HELPER_PRELUDE = ("import os\n\nfrom triton.language.extra import libdevice\n\n"
                  "# Triton's interpreter (TRITON_INTERPRET=1, CPU verification) has no libdevice.\n"
                  "_INTERPRET = os.environ.get(\"TRITON_INTERPRET\") == \"1\"\n")

_INFIX = {"add": "+", "sub": "-", "mul": "*", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
          "ge": ">=", "and": "&", "or": "|", "xor": "^"}
_TL_UNARY = {"exp": "tl.exp", "exp2": "tl.exp2", "log": "tl.log", "log2": "tl.log2", "sqrt": "tl.sqrt",
             "rsqrt": "tl.rsqrt", "sin": "tl.sin", "cos": "tl.cos", "erf": "tl.erf", "sigmoid": "tl.sigmoid",
             "abs": "tl.abs", "floor": "tl.floor", "ceil": "tl.ceil"}
_HELPER_UNARY = {"tanh": "_tanh", "log1p": "_log1p", "expm1": "_expm1"}


def literal(value, dtype: str) -> str:
    if isinstance(value, bool) or dtype == "bool":
        return "1" if value else "0"
    if isinstance(value, float) or dtype in FLOAT:
        v = float(value)
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("inf")' if v > 0 else 'float("-inf")'
        return repr(v)
    return str(int(value))


def nan_extremum(op: str, a: str, b: str, dtype: str = "fp32") -> str:
    """`tl.maximum`/`tl.minimum` of two values, NaN where either is NaN (torch.maximum, torch.clamp, torch.amax).

    Triton's default (PropagateNan.NONE) compiles to maxnum/minnum, which returns the other operand: a NaN
    input would vanish on the GPU (the interpreter hides this: it computes both with np.maximum, unless
    verify/interp.py's install() makes it GPU-faithful). PropagateNan.ALL compiles to LLVM's maximum/minimum
    (sm_90: max.NaN.f32; gfx942: max plus a NaN select). Integer operands take the plain form."""
    fn = "tl.maximum" if op == "max" else "tl.minimum"
    if dtype not in FLOAT:
        return f"{fn}({a}, {b})"
    return f"{fn}({a}, {b}, propagate_nan=tl.PropagateNan.ALL)"


# Python's tokenizer refuses 200 nested parentheses ("too many nested parentheses"): a concatenation of 256 pieces,
# rendered as nested tl.where, made KernelBench level-3 34_VanillaRNNHidden's kernel.py unparseable (2026-12-04). A
# sub-expression nested deeper than this is bound to a variable of its own (ExprRenderer's `bind`).
NEST_LIMIT = 64


def nesting(text: str) -> int:
    """The deepest nesting of brackets in `text`."""
    depth = deepest = 0
    for ch in text:
        if ch in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]":
            depth -= 1
    return deepest


class ExprRenderer:
    """Turns one node's expression into text.

    `leaf(load, gather_text, valid_text, i)` renders a Load (a register value or a tl.load); `slot(kind, i,
    value)` renders a number found at pre-order position i (a Const, an Index start or step) — a literal,
    or a runtime size argument where the number changes with the input sizes. The numbering is the one
    capture.generalize uses for its slots. `bind(text)`, where given, writes an operation's text nested past
    NEST_LIMIT to a variable before the statement and returns its name (the writer's KernelWriter.bind).
    """

    def __init__(self, leaf: Callable[[Load, str | None, str | None, int], str], index: Callable[[int], str],
                 slot: Callable[[str, int, object, str], str] | None = None, reciprocals: dict[str, str] | None = None,
                 short_outputs: bool = False, bind: Callable[[str], str] | None = None):
        self.leaf = leaf
        self.bind = bind
        self.short_outputs = short_outputs   # every output of the kernel is 16-bit: expm1 by exp (helpers/math.py)
        self.index = index
        self.slot = slot or (lambda kind, i, value, dtype: literal(value, dtype))
        self.reciprocals = reciprocals or {}   # divisor text -> its reciprocal's: a float `a / d` is `a * r`
        self.helpers: set[str] = set()
        self.counter = 0

    def render(self, e: Expr) -> str:
        i = self.counter
        self.counter += 1
        if isinstance(e, Load):
            gather = self.render(e.gather[1]) if e.gather is not None else None
            valid = self.render(e.valid) if e.valid is not None else None
            return self.leaf(e, gather, valid, i)
        if isinstance(e, Const):
            return self.slot("const", i, e.value, e.dtype)
        if isinstance(e, Index):
            base = self.index(e.axis)
            step = self.slot("step", i, e.step, "i64")
            start = self.slot("start", i, e.start, "i64")
            if step != "1":
                base = f"{base} * {step}"
            return f"({base} + {start})" if start != "0" else base
        text = self._op(e)
        # fewer characters than twice the limit cannot nest past it: the scan runs on long texts only
        if self.bind is not None and len(text) > 2 * NEST_LIMIT and nesting(text) > NEST_LIMIT:
            return self.bind(text)
        return text

    def _op(self, e: Op) -> str:
        args = [self.render(a) for a in e.args]
        op = e.op
        if op in _INFIX:
            return f"({args[0]} {_INFIX[op]} {args[1]})"
        if op == "div":
            if e.dtype in FLOAT and args[1] in self.reciprocals:
                return f"({args[0]} * {self.reciprocals[args[1]]})"
            if e.dtype in FLOAT:
                return f"({args[0]} / {args[1]})"
            return f"({args[0]} // {args[1]})"
        if op in ("floordiv", "truncdiv"):
            return self._rounded_div(op, e.dtype, args[0], args[1])
        if op == "neg":
            return f"(-{args[0]})"
        if op == "not":
            return f"({args[0]} == 0)"
        if op == "reciprocal":
            return f"(1.0 / {args[0]})"
        if op == "square":
            return f"({args[0]} * {args[0]})"
        if op == "relu":   # NaN < 0 is false: NaN stays NaN, as torch.relu (and -0.0 stays -0.0)
            return f"tl.where({args[0]} < 0, 0.0, {args[0]})"
        if op in ("max", "min"):
            return nan_extremum(op, args[0], args[1], e.dtype)
        if op == "where":
            return f"tl.where({args[0]}, {args[1]}, {args[2]})"
        if op == "isnan":
            return f"({args[0]} != {args[0]})"
        if op == "isinf":
            return f'(tl.abs({args[0]}) == float("inf"))'
        if op == "sign":
            return f"tl.where({args[0]} > 0, 1.0, tl.where({args[0]} < 0, -1.0, 0.0))"
        if op in ("trunc", "round"):
            a = args[0]
            if op == "trunc":
                return f"tl.where({a} < 0, tl.ceil({a}), tl.floor({a}))"
            # round half to even, as torch.round
            return (f"tl.where(tl.abs({a} - tl.floor({a}) - 0.5) == 0.0, "
                    f"2.0 * tl.floor(0.5 * {a} + 0.5), tl.floor({a} + 0.5))")
        if op == "pow":
            return self._pow(e, args)
        if op in ("fmod", "remainder") and e.dtype not in FLOAT:   # in integers: a float quotient rounds past 2^24
            if op == "fmod":
                return f"({args[0]} % {args[1]})"   # Triton's integer % takes the dividend's sign, as fmod
            return f"({args[0]} - {self._rounded_div('floordiv', e.dtype, args[0], args[1])} * {args[1]})"
        if op in ("fmod", "remainder"):
            q = f"{args[0]} / {args[1]}"
            if op == "fmod":
                q = f"tl.where({q} < 0, tl.ceil({q}), tl.floor({q}))"
            else:
                q = f"tl.floor({q})"
            return f"({args[0]} - {q} * {args[1]})"
        if op == "atan2":
            raise NotImplementedError("atan2 has no portable Triton form")
        if op == CAST:
            if e.dtype == "bool":
                return f"({args[0]} != 0)"
            if compute_dtype(e.dtype) != e.dtype and e.args[0].dtype != e.dtype:
                # a cast to a 16-bit float rounds, though the arithmetic after it stays in fp32: x.to(bf16).float()
                # in an fp32 model is x rounded (eager, torch.compile and the float64 reference round it too)
                return f"{args[0]}.to({TL_DTYPES[e.dtype]}).to({TL_DTYPES[compute_dtype(e.dtype)]})"
            return f"{args[0]}.to({TL_DTYPES[compute_dtype(e.dtype)]})"
        if op in _TL_UNARY:
            return f"{_TL_UNARY[op]}({args[0]})"
        if op == "expm1" and self.short_outputs:
            self.helpers.add("expm1_16")
            return f"_expm1_16({args[0]})"
        if op in _HELPER_UNARY:
            self.helpers.add(op)
            return f"{_HELPER_UNARY[op]}({args[0]})"
        raise NotImplementedError(f"no Triton rendering for op {op!r}")

    @staticmethod
    def _rounded_div(op: str, dtype: str, a: str, b: str) -> str:
        """torch.div's rounding modes. Triton's integer // truncates (C, as its %), where torch's floor division of
        integers rounds down: a quotient with a remainder and operands of opposite signs is one less."""
        if dtype in FLOAT:
            q = f"({a} / {b})"
            return f"tl.floor{q}" if op == "floordiv" else f"tl.where({q} < 0, tl.ceil{q}, tl.floor{q})"
        if op == "truncdiv":
            return f"({a} // {b})"
        return f"tl.where((({a} % {b}) != 0) & (({a} < 0) != ({b} < 0)), {a} // {b} - 1, {a} // {b})"

    def _pow(self, e: Op, args: list[str]) -> str:
        base, exponent = e.args
        if isinstance(exponent, Const):
            y = float(exponent.value)
            table = {2.0: f"({args[0]} * {args[0]})", 3.0: f"({args[0]} * {args[0]} * {args[0]})",
                     1.0: args[0], 0.5: f"tl.sqrt({args[0]})", -0.5: f"tl.rsqrt({args[0]})",
                     -1.0: f"(1.0 / {args[0]})", 0.0: "1.0"}
            if y in table:
                return table[y]
            if y.is_integer():
                # exp(y·log|x|) with the sign of x^y for an integer exponent
                mag = f"tl.exp({y!r} * tl.log(tl.abs({args[0]})))"
                return mag if int(y) % 2 == 0 else f"tl.where({args[0]} < 0, -{mag}, {mag})"
            return f"tl.exp({y!r} * tl.log({args[0]}))"
        return f"tl.exp({args[1]} * tl.log({args[0]}))"
