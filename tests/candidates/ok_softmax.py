"""Row softmax in two passes over the row: an online max/sum pass, then a normalising write pass.

A correct candidate for softmax_rows and problems/level1/softmax_long_rows.py (any row length: the row is
walked in BLOCK-wide chunks). Traffic: 2 reads + 1 write per element (the floor is 1 read + 1 write), so
about 1.5x the floor: measured 4693 µs at 4096 x 393216 fp32 against a 3051 µs floor, eager 6178 µs,
torch.compile 4739 µs (H200, torch 2.11, 2026-11-29, benchmarks/data/verify_time_h200_2026-11-29.txt).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)   # running max per lane
    s = tl.zeros([BLOCK], tl.float32)                 # running sum of exp(x - m) per lane
    nan = tl.zeros([BLOCK], tl.int32)                 # a NaN seen per lane: torch's softmax row is then NaN
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        nan = nan | (x != x).to(tl.int32)
        m_new = tl.maximum(m, x)
        live = m_new > float("-inf")
        s = tl.where(live, s * tl.exp(m - m_new) + tl.exp(x - m_new), 0.0)
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(tl.where(m > float("-inf"), s * tl.exp(m - m_row), 0.0), axis=0)
    row_nan = tl.max(nan, axis=0) > 0
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        y = tl.where(row_nan, float("nan"), tl.exp(x - m_row) / s_row)
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2:
            raise ValueError(f"x has shape {tuple(x.shape)}: this kernel takes rows, a tensor of rank 2")
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK = min(triton.next_power_of_2(n_cols), 4096)
        _softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK,
                                   num_warps=16 if BLOCK >= 4096 else 4)
        return y
