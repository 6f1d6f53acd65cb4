"""A product over 3 elements (KernelBench level-3 49_Mamba2's (…, 3) x (3, …) chunk products): K is below the smallest
tile, so one masked BLOCK_K step of 16 covers it."""

import torch
import torch.nn as nn

rows = 512
cols = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    return [torch.randn(rows, 3), torch.randn(3, cols)]


def get_init_inputs():
    return []
