"""Reverse prefix sum (suffix sums) along rows: x.flip(1).cumsum(1).flip(1), a scan through negative strides."""
import torch
import torch.nn as nn

batch_size = 8
dim = 96

VARIANTS = {
    "small": {"batch_size": 4, "dim": 48},
    "odd": {"batch_size": 3, "dim": 77},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flip(1).cumsum(1).flip(1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
