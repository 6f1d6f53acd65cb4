"""tl.dot under the precision policies, copied into kernel.py as they are (helpers.dot_helper): the
form the GPU runs, and an emulation for the Triton interpreter, which ignores input_precision (numpy matmul in
fp32), keeps bf16 as raw bits and multiplies fp8 raw bits; kernel.py picks one by _INTERPRET, so the CPU referee
judges the precision the GPU computes in.

tf32 keeps 10 of fp32's 23 mantissa bits. Rounding: NVIDIA's cvt.rna.tf32.f32 (round to nearest, ties away
from zero), which Triton uses to split operands for tf32x3; the plain tf32 emulation rounds the same way
(hardware that ignores the low 13 bits instead errs a little more: both are ~1e-3 relative, two orders of
magnitude above the fp32 tolerance). tf32x3 = a_hi·b_lo + a_lo·b_hi + a_hi·b_hi with x_hi = tf32(x),
x_lo = tf32(x - x_hi), as Triton's F32DotTC pass decomposes it; products of tf32 values are exact in fp32, so
the emulation matches the hardware up to summation order.

Inf operands under tf32x3: x_lo = inf - inf is NaN, so the two small products are NaN in every output that meets an
Inf or NaN operand. Triton 3.6.0's F32DotTC pass (what `input_precision="tf32x3"` compiles to) then sets the NaNs
of their sum to 0 (`arith.cmpf uno` + `arith.select` before the big product, seen in the sm_90 TTGIR) and the big
product a_hi·b_hi gives the IEEE result (±Inf, or NaN for Inf·0 or a NaN operand: rounding to tf32 keeps Inf, NaN
and the sign). The emulation does the same. Zeroing the low parts of non-finite operands instead is not enough:
a finite x with x_lo = 0 (any tf32 value) times an Inf is 0·Inf = NaN in the small product.
"""

import triton
import triton.language as tl

from kerntailor.codegen.helpers.fp8_e4m3fn import _fp8_decode  # kernel.py: the target format's


@triton.jit
def _round_tf32(x):
    """fp32 -> the nearest tf32 (10-bit mantissa), ties away from zero, as cvt.rna.tf32.f32."""
    bits = x.to(tl.int32, bitcast=True)
    return ((bits + 0x1000) & -0x2000).to(tl.float32, bitcast=True)


@triton.jit
def _dot_tf32_emulated(a, b, acc):
    return tl.dot(_round_tf32(a), _round_tf32(b), acc, input_precision="ieee")


@triton.jit
def _dot_tf32_hw(a, b, acc):
    return tl.dot(a, b, acc, input_precision="tf32")


@triton.jit
def _dot_tf32x3_emulated(a, b, acc):
    a_hi = _round_tf32(a)
    b_hi = _round_tf32(b)
    a_lo = _round_tf32(a - a_hi)
    b_lo = _round_tf32(b - b_hi)
    small = tl.dot(a_hi, b_lo, tl.dot(a_lo, b_hi, tl.zeros_like(acc), input_precision="ieee"),
                   input_precision="ieee")
    small = tl.where(small != small, 0.0, small)   # as Triton's F32DotTC: an Inf's x - x_hi is NaN; a_hi·b_hi: Inf
    return tl.dot(a_hi, b_hi, small, input_precision="ieee") + acc


@triton.jit
def _dot_tf32x3_hw(a, b, acc):
    return tl.dot(a, b, acc, input_precision="tf32x3")


@triton.jit
def _dot_16bit_upcast(a, b, acc):
    return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")


@triton.jit
def _dot_16bit_hw(a, b, acc):
    return tl.dot(a, b, acc)


@triton.jit
def _dot_fp8_emulated(a, b, acc):
    return tl.dot(_fp8_decode(a), _fp8_decode(b), acc, input_precision="ieee")


@triton.jit
def _dot_fp8_hw(a, b, acc):
    # fp32 accumulation: promoted every BLOCK_K (sm_90's fp8 wgmma otherwise accumulates in fewer bits)
    return tl.dot(a, b, acc, max_num_imprecise_acc=a.shape[1])
