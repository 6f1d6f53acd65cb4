"""CHEAT (relu_small): launches one program too few, so the last block of the output is never written.
Expected: unwritten."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 64
        _relu_kernel[(max(triton.cdiv(n, BLOCK) - 1, 1),)](x, y, n, BLOCK=BLOCK)   # skips the last block
        return y
