"""A cumulative sum whose every element is subtracted from its row's last (KernelBench level-3 49_Mamba2's segment
sums: x_cumsum[..., -1:] - x_cumsum): the scan's epilogue reads the scan's own output through a broadcast view, which
the scan's kernel cannot index, and a scan has no library call to fall back on."""

import torch
import torch.nn as nn

batch_size = 16
length = 64
dim = 48


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = torch.cumsum(x, dim=-1)
        return c[..., -1:] - c


def get_inputs():
    return [torch.randn(batch_size, dim, length)]


def get_init_inputs():
    return []
