"""Sizes in generated code: SizeExprs become kernel arguments (or literals) and host expressions.

A kernel never bakes a size that differs between the problem's variants: every such size or stride is
a runtime argument, computed on the host from the input tensors' shapes (see capture/generalize.py).
Contiguity is decided symbolically, so a fast path is only taken where it holds for every shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from kerntailor.capture.generalize import Dim, Generalized, SizeExpr

Canon = tuple[Fraction, tuple[tuple[Dim, Fraction], ...]]


def row_sizes(space: tuple[int, ...], axes: tuple[int, ...]) -> dict[str, int]:
    """{"R": the elements of one row (the product of `space`'s `axes`), "X": the rows}: what a reduction's or a
    scan's search space and cost model size it by."""
    total = 1
    for s in space:
        total *= s
    r = 1
    for k in axes:
        r *= space[k]
    return {"R": r, "X": max(1, total // r)}


def canon(e: SizeExpr) -> Canon | None:
    """(coeff, sorted factors) of a monomial; None if it has an offset, more terms or a float coefficient."""
    if e.offset or e.more or not isinstance(e.coeff, Fraction):
        return None
    merged: dict[Dim, Fraction] = {}
    for d, x in e.factors:
        merged[d] = merged.get(d, Fraction(0)) + x
    return e.coeff, tuple(sorted(((d, x) for d, x in merged.items() if x), key=repr))


def product(exprs: list[SizeExpr]) -> SizeExpr | None:
    coeff = Fraction(1)
    factors: list[tuple[Dim, Fraction]] = []
    for e in exprs:
        c = canon(e)
        if c is None:
            return None
        coeff *= c[0]
        factors.extend(c[1])
    merged = canon(SizeExpr(coeff, tuple(factors)))
    return SizeExpr(merged[0], merged[1]) if merged else None


def same(a: SizeExpr, b: SizeExpr) -> bool:
    ca, cb = canon(a), canon(b)
    return ca is not None and ca == cb


def const(value: int) -> SizeExpr:
    return SizeExpr(Fraction(value))


@dataclass
class SizeArgs:
    """The runtime size arguments of one kernel: SizeExpr -> argument name, in order of first use."""

    gen: Generalized
    host_names: dict[Dim, str]
    args: list[tuple[str, SizeExpr]] = field(default_factory=list)
    aliases: dict = field(default_factory=dict)   # a size's kernel-side name after the kernel renames it

    def text(self, e: SizeExpr) -> str:
        """Kernel-side text for a size: a literal if constant, else an argument (or the name `alias` gave it)."""
        if e.is_constant:
            return e.render({})
        key = canon(e) or e
        if key in self.aliases:
            return self.aliases[key]
        for name, other in self.args:
            if (canon(other) or other) == key:
                return name
        name = f"s{len(self.args)}"
        self.args.append((name, e))
        return name

    def alias(self, e: SizeExpr, name: str) -> None:
        """From now on `e` reads as `name` in the kernel (a local the kernel computed equal to it)."""
        self.aliases[canon(e) or e] = name

    def host(self, e: SizeExpr) -> str:
        return e.render(self.host_names)

    def slot(self, path: tuple, default: int | float) -> SizeExpr:
        return self.gen.expr(path, default)


def quotient(a: SizeExpr, b: SizeExpr) -> SizeExpr | None:
    """a / b as a monomial (None when either is not a monomial or b is zero)."""
    ca, cb = canon(a), canon(b)
    if ca is None or cb is None or cb[0] == 0:
        return None
    merged = canon(SizeExpr(ca[0] / cb[0], tuple(ca[1]) + tuple((d, -x) for d, x in cb[1])))
    return SizeExpr(merged[0], merged[1]) if merged else None


def host_value_is_float(e: SizeExpr) -> bool:
    """Whether the host's text for `e` (SizeExpr.render) evaluates to a Python float: a fractional power, a float
    coefficient written out (not 1) or dividing, a fractional offset. Else it is an int (exact `//` where the
    coefficient is a fraction). Triton's launcher types the kernel argument by that value: fp32 or an integer."""
    if e.is_constant:
        value = e.coeff + e.offset
        return isinstance(value, float) or value.denominator != 1
    if any(x.denominator != 1 for _, x in e.factors):
        return True
    if e.more:   # a polynomial (polyfit.py): integer coefficients and exponents after a Fraction-or-float head
        return isinstance(e.coeff, float) or Fraction(e.coeff).denominator != 1 or Fraction(e.offset).denominator != 1
    if isinstance(e.coeff, float) and (e.coeff != 1 or any(x < 0 for _, x in e.factors)):
        return True
    return Fraction(e.offset).denominator != 1


def is_whole(e: SizeExpr) -> bool:
    """A monomial with no negative exponent: a whole number for every size of the problem (its
    coefficient may be a fraction the model itself divides by, as C / G in GroupNorm)."""
    c = canon(e)
    return c is not None and c[0] > 0 and all(x > 0 and x.denominator == 1 for _, x in c[1])


# --- sizes as polynomials of input dims (a sum of monomials: a view's offset such as (n - s) * stride) -------

Poly = dict[tuple, Fraction]


def poly(e: SizeExpr) -> Poly | None:
    if not isinstance(e.coeff, Fraction):
        return None
    out: Poly = {}
    for coeff, factors in ((e.coeff, e.factors),) + e.more:
        merged: dict[Dim, Fraction] = {}
        for d, x in factors:
            merged[d] = merged.get(d, Fraction(0)) + x
        key = tuple(sorted(((d, x) for d, x in merged.items() if x), key=repr))
        if coeff:
            out[key] = out.get(key, Fraction(0)) + coeff
    if e.offset:
        out[()] = out.get((), Fraction(0)) + Fraction(e.offset)
    return out


def poly_add(a: Poly, b: Poly, scale: Fraction = Fraction(1)) -> Poly:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + scale * v
    return {k: v for k, v in out.items() if v}


def poly_mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ka, va in a.items():
        for kb, vb in b.items():
            merged: dict[Dim, Fraction] = dict(ka)
            for d, x in kb:
                merged[d] = merged.get(d, Fraction(0)) + x
            key = tuple(sorted(((d, x) for d, x in merged.items() if x), key=repr))
            out[key] = out.get(key, Fraction(0)) + va * vb
    return {k: v for k, v in out.items() if v}


def poly_expr(p: Poly) -> SizeExpr | None:
    terms = [(k, v) for k, v in p.items() if k]
    offset = p.get((), Fraction(0))
    if not terms:
        return SizeExpr(Fraction(offset))
    if len(terms) > 1:
        return None
    (key, coeff), = terms
    return SizeExpr(coeff, key, offset)


def poly_quotient(a: SizeExpr, b: SizeExpr) -> SizeExpr | None:
    """a / b for a monomial b and a sum a of its multiples that is one monomial and a constant: a slice's offset
    (n - s)·stride over its stride is n - s. None otherwise."""
    pa, cb = poly(a), canon(b)
    if pa is None or cb is None or cb[0] == 0:
        return None
    out: Poly = {}
    for key, c in pa.items():
        merged = dict(key)
        for d, x in cb[1]:
            merged[d] = merged.get(d, Fraction(0)) - x
        if any(x < 0 for x in merged.values()):
            return None
        k = tuple(sorted(((d, x) for d, x in merged.items() if x), key=repr))
        out[k] = out.get(k, Fraction(0)) + c / cb[0]
    return poly_expr(out)
