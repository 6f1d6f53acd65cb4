"""Math helpers for functions without a `tl.*` form, copied into kernel.py as they are (helpers.math_helper).

tanh, log1p and expm1: the vendor library's function on a GPU (libdevice), and under the Triton interpreter
(which has no libdevice) a portable form written with Kahan's tricks; kernel.py picks one by _INTERPRET. Both
are accurate to a few ulp in fp32 (tests/test_codegen_helpers.py).

expm1 for 16-bit results (`_expm1_16`, one form everywhere): libdevice's expm1 is about 32 PTX instructions per
element on sm_90 (cross-compiled, triton 3.6), which made bf16 ELU and SELU instruction-bound at 1.21-1.25x their
memory floor on the H200 while eager ran at it. exp(x) − 1 is about 13, and accurate where it does not cancel:
past |x| = 1/16 the relative error is at most 1/(1 − e^(−1/16)) ≈ 16.5 times exp's (a few ulp), about 5e-6; inside,
the Taylor polynomial's truncation is x⁴/120 ≈ 1.3e-7 relative. Both are far below a bf16 or fp16 result's half-ulp
(2e-3, 4.9e-4), so the writers take it only where every output of the kernel is 16-bit (render.py).

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
def _expm1_16(x):
    # for kernels whose every output is bf16/fp16: exp(x) − 1 past |x| = 1/16, x + x²/2 + x³/6 + x⁴/24 inside
    u = x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0))))
    return tl.where(tl.abs(x) < 0.0625, u, tl.exp(x) - 1.0)


@triton.jit
def _tanh_softplus(x):
    # tanh(log1p(exp(x))) = e(e + 2) / (e(e + 2) + 2), e = exp(x): one exp, no log1p and no tanh
    e = tl.exp(tl.where(x > 20.0, 20.0, x))
    n = e * (e + 2.0)
    return n / (n + 2.0)
