"""A row's max or min that keeps a NaN, as torch.amax/amin do, copied into kernel.py as they are
(helpers.reduce_helper): `_row_max(x)` / `_row_min(x)` of an fp32 [rows, lanes] tile, kept as [rows, 1].

tl.max and tl.min combine with maxnum/minnum, which drop a NaN (on a GPU; the interpreter uses np.nanmax). On a
GPU the row value is one tl.reduce whose combine is maximum/minimum(propagate_nan=ALL) (sm_90: max.NaN.f32 in
the same shuffle tree as tl.max): one reduction, so no more live values than tl.max. A NaN flag reduced beside
the max (`tl.max(x != x)`) is a second reduction: on sm_90 it took the persistent TMA GEMM + logsumexp row tail
(BLOCK_M 256, 8 warps, 3 stages) from 255 registers and no spill to 255 registers and 8 spilled (ptxas, triton
3.6.0, 2026-12-01). The interpreter runs a tl.reduce with a user combine one element at a time in Python
(generic_reduce: a second per element), so there kernel.py computes the same value from tl.max and that NaN
flag (two numpy reductions); max and min are exact, so both forms give the same bits but for the sign of a
zero where +0.0 and -0.0 tie (torch leaves that unspecified as well).

A row's product, `_row_prod(x)` (fp32 or int64), has no tl.prod in Triton 3.6: on a GPU it is one tl.reduce whose
combine multiplies (a shuffle tree, as tl.sum's); under the interpreter that tl.reduce would run one element at a
time in Python, so there it is the row's last running product (tl.cumprod is numpy's cumprod there). The orders of
the multiplications differ, so the two forms may differ in the last bits; NaN, inf and 0 propagate through both
as through any product (inf * 0 is NaN, as in torch).
"""

import triton
import triton.language as tl


@triton.jit
def _maximum_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _minimum_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _row_max_hw(x):
    return tl.reduce(x, 1, _maximum_nan, keep_dims=True)


@triton.jit
def _row_min_hw(x):
    return tl.reduce(x, 1, _minimum_nan, keep_dims=True)


@triton.jit
def _row_max_flagged(x):
    nan = tl.max((x != x).to(tl.int32), axis=1, keep_dims=True) > 0
    return tl.where(nan, float("nan"), tl.max(x, axis=1, keep_dims=True))


@triton.jit
def _row_min_flagged(x):
    nan = tl.max((x != x).to(tl.int32), axis=1, keep_dims=True) > 0
    return tl.where(nan, float("nan"), tl.min(x, axis=1, keep_dims=True))


@triton.jit
def _multiply(a, b):
    return a * b


@triton.jit
def _row_prod_hw(x):
    return tl.reduce(x, 1, _multiply, keep_dims=True)


@triton.jit
def _row_prod_scanned(x):
    last = tl.arange(0, x.shape[1])[None, :] == x.shape[1] - 1
    return tl.sum(tl.where(last, tl.cumprod(x, axis=1), 0), axis=1, keep_dims=True)
