"""CHEAT (relu_small): an unmasked load through a wild offset (a 64-bit index bug: 2^38 elements past the
tensor). A GPU faults (illegal memory access); the referee's interpreter memcheck stops it before the access.
Expected: crash."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs + (1 << 38))          # no mask, wrong base
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        _relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
        return y
