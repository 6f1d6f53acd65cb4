"""CHEAT (relu_small): computes in float64 and returns float64 (more "accurate", different function
signature). Expected: output."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu64_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float64)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty(x.shape, device=x.device, dtype=torch.float64)
        _relu64_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        return y
