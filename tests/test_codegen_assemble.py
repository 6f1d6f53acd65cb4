"""The assembler's signature: a size argument's Triton type is what Triton's launcher makes of the value the host
passes (codegen/assemble.py), so the build compiles the kernel that runs."""

from __future__ import annotations

import itertools
from fractions import Fraction

from kerntailor.capture.generalize import Dim, SizeExpr
from kerntailor.codegen.assemble import size_type
from kerntailor.codegen.sizes import host_value_is_float


def test_a_size_argument_is_fp32_exactly_where_the_host_passes_a_float():
    d, e = Dim(0, 1), Dim(1, 0)
    names = {d: "d1", e: "e0"}
    coeffs = [Fraction(1), Fraction(3), Fraction(1, 8), 1.0, 2.0, 0.125]
    exponents = [(), ((d, Fraction(1)),), ((d, Fraction(1)), (e, Fraction(-1))), ((d, Fraction(1, 2)),),
                 ((d, Fraction(2)), (e, Fraction(1)))]
    offsets = [Fraction(0), Fraction(4), Fraction(1, 2)]
    seen = set()
    for coeff, factors, offset in itertools.product(coeffs, exponents, offsets):
        expr = SizeExpr(coeff, factors, offset)
        value = eval(expr.render(names), {"d1": 48, "e0": 3})   # what forward() computes and passes
        assert host_value_is_float(expr) == isinstance(value, float), (expr, expr.render(names), value)
        assert size_type(expr, big=False) == ("fp32" if isinstance(value, float) else "i32")
        seen.add(type(value))
    assert seen == {int, float}
