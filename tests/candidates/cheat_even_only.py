"""CHEAT (relu_small): works on pairs of elements (a "vectorised" kernel); the pair count is n // 2, so with
an odd number of elements the last one is never written. Passes even sizes. Expected: unwritten, on variant
odd (5 x 37 elements)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_pairs_kernel(x_ptr, y_ptr, n_pairs, BLOCK: tl.constexpr):
    pairs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = pairs < n_pairs
    lo = tl.load(x_ptr + 2 * pairs, mask=mask)
    hi = tl.load(x_ptr + 2 * pairs + 1, mask=mask)
    tl.store(y_ptr + 2 * pairs, tl.where(lo > 0, lo, 0.0), mask=mask)
    tl.store(y_ptr + 2 * pairs + 1, tl.where(hi > 0, hi, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n_pairs = x.numel() // 2
        _relu_pairs_kernel[(triton.cdiv(n_pairs, 64),)](x, y, n_pairs, BLOCK=64)
        return y
