"""CHEAT (layernorm_small): ok_layernorm.py with Triton's block limit "handled" by capping the block at
TRITON_MAX_TENSOR_NUMEL: right for rows of up to 2^20 elements; past that it normalises by the first 2^20 and
never writes the rest of the row (torch.empty's garbage comes back), with no error.
Expected: edges (unwritten) at edge:rows."""
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
    n = tl.minimum(n_cols, BLOCK)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride_y + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        x2 = x.reshape(-1, hidden).contiguous()          # (rows, hidden)
        y = torch.empty_like(x2)
        BLOCK = min(triton.next_power_of_2(hidden), tl.TRITON_MAX_TENSOR_NUMEL)
        _layernorm_kernel[(x2.shape[0],)](x2, self.ln.weight, self.ln.bias, y, hidden, x2.stride(0), y.stride(0),
                                          self.ln.eps, BLOCK=BLOCK, num_warps=8 if BLOCK >= 2048 else 4)
        return y.view_as(x)
