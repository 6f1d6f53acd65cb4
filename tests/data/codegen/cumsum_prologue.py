"""Prefix sum over the middle axis of (B, L, D) of a pointwise prologue (x * 1.5 - 0.5, computed where the scan
loads each element: plan/fusion.py), the scanned axis strided."""
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
        return torch.cumsum(x * 1.5 - 0.5, dim=1)


def get_inputs():
    return [torch.randn(batch_size, length, dim)]


def get_init_inputs():
    return []
