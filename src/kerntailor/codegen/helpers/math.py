"""Math helpers for functions without a `tl.*` form, copied into kernel.py as they are (helpers.math_helper).

tanh, log1p and expm1: the vendor library's function on a GPU (libdevice), and under the Triton interpreter
(which has no libdevice) a portable form written with Kahan's tricks; kernel.py picks one by _INTERPRET. Both
are accurate to a few ulp in fp32 (tests/test_codegen_helpers.py).

tanh(softplus(x)) = tanh(log1p(e)) with e = exp(x) is ((1 + e)^2 - 1) / ((1 + e)^2 + 1) = e(e + 2) / (e(e + 2) + 2):
one exp and a division instead of log1p and tanh (about 70 PTX instructions: the bf16 Mish was compute-bound).
Accurate to a few ulp (no cancellation: for x -> -inf it is e(e + 2)/(2 + ...) ~ e). Past x = 20 tanh is 1.0 in
fp32; the exp is capped there so that e(e + 2) stays finite (a NaN x stays NaN: NaN > 20 is false).
"""

import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _tanh_portable(x):
    # tanh = sign(x)·(1 − e)/(1 + e), e = exp(−2|x|); a Taylor series near 0 keeps the relative error small
    ax = tl.abs(x)
    e = tl.exp(-2.0 * ax)
    big = (1.0 - e) / (1.0 + e)
    x2 = x * x
    small = ax * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))))
    t = tl.where(ax < 0.0625, small, big)
    return tl.where(x < 0, -t, t)


@triton.jit
def _tanh_libdevice(x):
    return libdevice.tanh(x)


@triton.jit
def _log1p_portable(x):
    # Kahan: log(u)·x/(u − 1) with u = 1 + x is accurate where log(1 + x) is not
    u = 1.0 + x
    return tl.where(u == 1.0, x, tl.log(u) * (x / (u - 1.0)))


@triton.jit
def _log1p_libdevice(x):
    return libdevice.log1p(x)


@triton.jit
def _expm1_portable(x):
    # Kahan: (u − 1)·x/log(u) with u = exp(x)
    u = tl.exp(x)
    return tl.where(u == 1.0, x, tl.where(u - 1.0 == -1.0, -1.0, (u - 1.0) * (x / tl.log(u))))


@triton.jit
def _expm1_libdevice(x):
    return libdevice.expm1(x)


@triton.jit
def _tanh_softplus(x):
    # tanh(log1p(exp(x))) = e(e + 2) / (e(e + 2) + 2), e = exp(x): one exp, no log1p and no tanh
    e = tl.exp(tl.where(x > 20.0, 20.0, x))
    n = e * (e + 2.0)
    return n / (n + 2.0)
