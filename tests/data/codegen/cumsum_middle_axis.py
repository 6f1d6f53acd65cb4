"""Inclusive prefix sum over the middle axis of (B, L, D): the scanned axis is strided."""
import torch
import torch.nn as nn

batch_size = 4
length = 40
dim = 16

VARIANTS = {
    "small": {"batch_size": 2, "length": 24, "dim": 8},
    "odd": {"batch_size": 3, "length": 45, "dim": 5},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, length, dim)]


def get_init_inputs():
    return []
