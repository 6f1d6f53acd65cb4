"""A cumulative sum from whose every element its row's first is subtracted: the scan's epilogue reads the scan's own
output through a broadcast view, which the scan's kernel cannot index (its row's last, KernelBench level-3
49_Mamba2's x_cumsum[..., -1:] - x_cumsum, is now the row's final carry: tests/test_codegen_refusals.py), and a scan
has no library call to fall back on."""

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
        return c - c[..., :1]


def get_inputs():
    return [torch.randn(batch_size, dim, length)]


def get_init_inputs():
    return []
