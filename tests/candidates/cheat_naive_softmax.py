"""CHEAT (softmax_rows): softmax without subtracting the row max. Right on well-scaled inputs, but exp
overflows to Inf on large values and Inf/Inf is NaN. Passes the normal and uniform draws. Expected: nan,
on the outliers draw."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_naive_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x)
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        _softmax_naive_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
