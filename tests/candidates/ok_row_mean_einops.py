"""Mean of each row, one program per row walking the row in blocks, in a file that imports einops as the reference does
(kernel.py carries the reference's imports for its constructor and _reference_forward): a correct candidate for
row_mean_einops."""
import torch
import torch.nn as nn
from einops import reduce  # noqa: F401  (the reference's import, unused here)
import triton
import triton.language as tl


@triton.jit
def _row_mean_kernel(x_ptr, y_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        acc += tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(acc, axis=0) / n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2:
            raise ValueError(f"x has shape {tuple(x.shape)}: this kernel takes rows, a tensor of rank 2")
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        _row_mean_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=1024)
        return y
