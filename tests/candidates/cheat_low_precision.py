"""CHEAT (softmax_rows, an fp32 problem): rounds its input to bf16 inside the kernel to save bandwidth
(relative error ~4e-3 per element, far above fp32's). Expected: accuracy."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_bf16_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.bfloat16).to(tl.float32)                      # the shortcut
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        _softmax_bf16_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
