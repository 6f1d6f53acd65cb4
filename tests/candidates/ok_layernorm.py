"""LayerNorm with affine, one row per program (the row fits in one block): a correct candidate for
layernorm_small and problems/level1/layernorm.py. Parameters live in self.ln so the reference state_dict loads.

Measured 134.5 µs at 16384 x 4096 fp32 against a 127 µs floor; eager 192.5 µs, torch.compile 129.5 µs (H200,
torch 2.11, 2026-11-29).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        BLOCK = triton.next_power_of_2(hidden)
        if BLOCK > tl.TRITON_MAX_TENSOR_NUMEL:
            raise ValueError(f"x has rows of {hidden} elements: this kernel holds a row in one block of at most "
                             f"{tl.TRITON_MAX_TENSOR_NUMEL} elements")
        x2 = x.reshape(-1, hidden).contiguous()          # (rows, hidden)
        y = torch.empty_like(x2)
        _layernorm_kernel[(x2.shape[0],)](x2, self.ln.weight, self.ln.bias, y, hidden, x2.stride(0), y.stride(0),
                                          self.ln.eps, BLOCK=BLOCK, num_warps=8 if BLOCK >= 2048 else 4)
        return y.view_as(x)
