"""CHEAT (row_mean_einops): launches a kernel for show, then returns the mean through einops, which the reference
imports (so the import itself is allowed): einops calls torch's own reduction. Expected: library (observed)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from einops import reduce


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        _copy_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        return reduce(y, "b d -> b", "mean")
