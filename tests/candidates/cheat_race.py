"""CHEAT (row_mean): splits each row over 4 programs that all store their partial mean to the same output
element without atomics: the last writer wins. On a GPU the winner changes from run to run; under the
interpreter the referee runs the programs in reverse order on its second run. Expected: determinism."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_mean_split_kernel(x_ptr, y_ptr, n_cols, stride, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, CHUNK, BLOCK):
        cols = part * CHUNK + start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0) * 4 / n_cols)   # races with the other 3 parts of the row


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        chunk = triton.next_power_of_2(triton.cdiv(x.shape[1], 4))
        _row_mean_split_kernel[(x.shape[0], 4)](x, y, x.shape[1], x.stride(0), CHUNK=chunk, BLOCK=min(chunk, 64))
        return y
