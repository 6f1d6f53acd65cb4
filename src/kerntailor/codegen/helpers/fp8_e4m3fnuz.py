"""The e4m3fnuz side of the fp8 quantize helpers, copied into kernel.py as they are (helpers.fp8_helpers):
the power-of-two scale of an amax, rounding to the format in fp32, the format's bit patterns (what fp8 buffers
hold under the interpreter, which has no fp8 cast it gets right) and the GPU's cast.

e4m3fnuz (precision.FP8_FORMATS): max 240, exponent bias 8, subnormals below 2^-7 in steps of 2^-10, no negative
zero (0x80 is NaN); the fp8 of gfx942. tests/test_codegen_helpers.py checks these bit for bit against
torch's e4m3fnuz and precision.pow2_scale under the interpreter.
"""

import triton
import triton.language as tl


@triton.jit
def _fp8_scale(amax):
    """(scale, 1 / scale): the smallest power of two s (2^-126..2^126) with amax / s <= 240; 1 where
    amax is 0. Integer arithmetic on the fp32 bits: exact, the same on every target (precision.pow2_scale)."""
    bits = amax.to(tl.int32, bitcast=True)
    e = ((bits >> 23) & 0xFF) - 134 + ((bits & 0x7FFFFF) > 0x700000).to(tl.int32)
    e = tl.minimum(tl.maximum(e, -126), 126)
    scale = ((e + 127) << 23).to(tl.float32, bitcast=True)
    inv = ((127 - e) << 23).to(tl.float32, bitcast=True)
    return tl.where(amax == 0, 1.0, scale), tl.where(amax == 0, 1.0, inv)


@triton.jit
def _fp8_round(y):
    """fp32 (|y| <= 240) -> the nearest e4m3fnuz value, ties to even, still in fp32 (exact arithmetic)."""
    bits = y.to(tl.int32, bitcast=True)
    rounded = ((bits + 0x7FFFF + ((bits >> 20) & 1)) & -0x100000).to(tl.float32, bitcast=True)
    sub = (y + 12288.0) - 12288.0   # below 2^-7: multiples of 2^-10
    return tl.where(tl.abs(y) < 0.0078125, sub, rounded)


@triton.jit
def _fp8_encode(y):
    """fp32 (|y| <= 240) -> the e4m3fnuz bit pattern (uint8) of its nearest value, ties to even."""
    v = _fp8_round(y)
    vb = v.to(tl.int32, bitcast=True)
    sign = (vb >> 24) & 0x80
    normal = ((((vb >> 23) & 0xFF) - 119) << 3) | ((vb >> 20) & 7)
    small = (tl.abs(v) * 1024.0).to(tl.int32)
    code = sign | tl.where(tl.abs(v) < 0.0078125, small, normal)
    return tl.where(v == 0, 0, code).to(tl.uint8)


@triton.jit
def _fp8_decode(code):
    """The e4m3fnuz bit pattern (uint8) -> its value in fp32 (exact)."""
    c = code.to(tl.int32)
    e = (c >> 3) & 0xF
    m = c & 7
    normal = (((e + 119) << 23) | (m << 20)).to(tl.float32, bitcast=True)
    mag = tl.where(e == 0, m.to(tl.float32) * 0.0009765625, normal)
    return tl.where((c & 0x80) != 0, -mag, mag)


@triton.jit
def _to_fp8_hw(y):
    # rounded here, so the cast only converts exact values, whatever rounding a target's conversion uses (the
    # H200 quantized bit-exactly against precision.py this way; gfx942's conversion is not checked on hardware)
    return _fp8_round(y).to(tl.float8e4b8)
