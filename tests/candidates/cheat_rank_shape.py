"""CHEAT (relu_small): right on rank-2 inputs, but reads the shape as (rows, cols) = x.shape[:2] and returns a
tensor of that shape: a 3-D input (3, 5, 37) gives a (3, 5) output, with no error (issue #17's ReLU).
Expected: edges (output) at edge:rank+1."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, tl.zeros_like(x), x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape[0], x.shape[1]
        y = torch.empty((rows, cols), device=x.device, dtype=x.dtype)
        n = rows * cols
        _relu_kernel[(triton.cdiv(n, 1024),)](x.contiguous(), y, n, BLOCK=1024)
        return y
