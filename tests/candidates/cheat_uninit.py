"""CHEAT (row_mean): a two-stage reduction whose partial-sums buffer is rounded up to a power of two and
never cleared; the second stage sums every slot, written or not (a read of unwritten memory). Expected:
determinism (run 1 reads NaN poison, run 2 finite garbage)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _partial_kernel(x_ptr, part_ptr, n_cols, stride, n_parts_pad, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    cols = part * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(part_ptr + row * n_parts_pad + part, tl.sum(x, axis=0))


@triton.jit
def _finish_kernel(part_ptr, y_ptr, n_cols, PARTS: tl.constexpr):
    row = tl.program_id(0)
    p = tl.load(part_ptr + row * PARTS + tl.arange(0, PARTS))   # all PARTS slots, written or not
    tl.store(y_ptr + row, tl.sum(p, axis=0) / n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, n_cols = x.shape
        BLOCK = 64
        n_parts = triton.cdiv(n_cols, BLOCK)
        pad = max(triton.next_power_of_2(n_parts + 1), 2)
        parts = torch.empty((rows, pad), device=x.device, dtype=torch.float32)
        _partial_kernel[(rows, n_parts)](x, parts, n_cols, x.stride(0), pad, BLOCK=BLOCK)
        y = torch.empty(rows, device=x.device, dtype=x.dtype)
        _finish_kernel[(rows,)](parts, y, n_cols, PARTS=pad)
        return y
