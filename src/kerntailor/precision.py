"""The precision policies a user picks for matrix products, and what the fp8 ones compute exactly.

    ieee        fp32 products in fp32 (the default); 16-bit operands multiply exactly, accumulate in fp32
    tf32x3      fp32 operands split into tf32 high and low parts, three products (about fp32 accuracy)
    tf32        fp32 operands rounded to tf32 (10-bit mantissa), judged by the tf32 tolerance
    fp8-row     every matrix product's operands quantized to fp8 along K, one scale per row of A and per
                column of B (per token and per output channel for x @ W.T), fp32 accumulation
    fp8-tensor  the same with one scale per operand

fp8 is exact by construction, so the referee can hold a kernel to it rather than to a loose bound:

- the format is the target's: e4m3fn (max 448) on sm_89+/gfx950, e4m3fnuz (max 240) on gfx942 (FP8_FORMATS;
  targets/table.py lists what each target has); gfx90a and sm_80 have none (fp8_format raises);
- the scale of a row (or tensor) is the smallest power of two s with amax / s <= the format's max
  (pow2_scale). A power of two makes x / s exact in fp32, so quantizing is one rounding: the format's own
  round-to-nearest-even of x / s (saturating at the max, which x / s never exceeds);
- the product Σ q_a·q_b is exact per term (two 4-bit significands) and accumulates in fp32; the result is
  multiplied by s_a·s_b (exact: powers of two) before the epilogue.

The referee computes the reference with every aten mm/bmm/addmm/baddbmm's operands put through
`quantize_along_k` (in float64 after it: only accumulation order separates a right kernel from it), and
reports the error against the unquantized reference beside it: what fp8 costs this problem.
"""

from __future__ import annotations

from dataclasses import dataclass

PRECISIONS = ("ieee", "tf32x3", "tf32", "fp8-row", "fp8-tensor")
FP8_PRECISIONS = ("fp8-row", "fp8-tensor")


@dataclass(frozen=True)
class Fp8Format:
    name: str          # "e4m3fn"
    torch_dtype: str   # "float8_e4m3fn"
    triton_type: str   # "fp8e4nv" (the signature / pointer type name)
    tl_type: str       # "float8e4nv" (the triton.language dtype)
    max: float         # the largest finite value
    max_exp: int       # max = (1 + max_mant / 2^23) * 2^max_exp
    max_mant: int      # the fp32 mantissa bits of max
    min_normal_exp: int  # smallest normal exponent: below it the step is 2^(min_normal_exp - 3)


FP8_FORMATS = {
    "e4m3fn": Fp8Format("e4m3fn", "float8_e4m3fn", "fp8e4nv", "float8e4nv", 448.0, 8, 0x600000, -6),
    "e4m3fnuz": Fp8Format("e4m3fnuz", "float8_e4m3fnuz", "fp8e4b8", "float8e4b8", 240.0, 7, 0x700000, -7),
}
_FORMAT_OF_ARCH = {"gfx942": "e4m3fnuz", "gfx950": "e4m3fn", "sm_89": "e4m3fn", "sm_90": "e4m3fn",
                   "sm_100": "e4m3fn", "sm_120": "e4m3fn"}


def is_fp8(precision: str) -> bool:
    return precision in FP8_PRECISIONS


def fp8_format(arch: str | None) -> Fp8Format:
    """The fp8 format matrix products use on `arch` (None: no target, e4m3fn); a clear error where none."""
    if arch is None:
        return FP8_FORMATS["e4m3fn"]
    name = _FORMAT_OF_ARCH.get(arch)
    if name is None:
        from kerntailor.errors import KerntailorError

        raise KerntailorError(f"fp8 precision: {arch} has no fp8 matrix instructions (gfx942, gfx950 and "
                              "sm_89+ do); use precision ieee")
    return FP8_FORMATS[name]


def pow2_scale(amax, fmt: Fp8Format):
    """fp32 tensor of scales: the smallest power of two s (2^-126..2^126) with amax / s <= fmt.max; 1 where
    amax is 0. Integer arithmetic on the fp32 bits, as the Triton helper does it (codegen/helpers/fp8_*.py)."""
    import torch

    amax = amax.to(torch.float32)
    bits = amax.view(torch.int32)
    exp = ((bits >> 23) & 0xFF) - 127
    exp = exp - fmt.max_exp + ((bits & 0x7FFFFF) > fmt.max_mant).to(torch.int32)
    exp = exp.clamp(-126, 126)
    scale = ((exp + 127) << 23).view(torch.float32)
    return torch.where(amax == 0, torch.ones_like(scale), scale)


def quantize_along_k(x, k_dim: int, per_row: bool, fmt: Fp8Format):
    """(q as float64 values, scales broadcastable to x): x's fp8 image under the policy, reduced along
    `k_dim` (A's last axis, B's second to last). `per_row` False: one scale for the whole tensor."""
    import torch

    x32 = x.to(torch.float32)
    amax = x32.abs().amax(dim=k_dim, keepdim=True) if per_row else x32.abs().amax().reshape([1] * x.dim())
    scale = pow2_scale(amax, fmt)
    inv = pow2_scale_inverse(scale)
    q = (x32 * inv).clamp(-fmt.max, fmt.max).to(getattr(torch, fmt.torch_dtype))
    return q.to(torch.float64), scale.to(torch.float64)


def pow2_scale_inverse(scale):
    """1 / scale, exactly (scale a power of two within 2^-126..2^126)."""
    import torch

    exp = ((scale.view(torch.int32) >> 23) & 0xFF) - 127
    return ((127 - exp) << 23).view(torch.float32)


def policy_dtype(dtypes: list) -> object | None:
    """The least precise floating dtype among `dtypes` (torch dtypes; the problem's inputs, parameters and
    outputs): the dtype a problem's tolerance (verify/tolerance.py) and cost (measure/cost.py) are taken in."""
    import torch

    order = (torch.bfloat16, torch.float16, torch.float32, torch.float64)
    floats = [d for d in dtypes if d in order]
    return min(floats, key=order.index) if floats else None
