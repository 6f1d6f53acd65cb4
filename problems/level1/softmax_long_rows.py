"""Softmax over very long rows (KernelBench level 1 #23 shape): memory-bound, one read and one write."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


# Rows long enough that one block cannot hold them (the split / online path), small enough for the
# interpreter; the odd variant has a prime row length.
VARIANTS = {"small": {"batch_size": 4, "dim": 8192}, "odd": {"batch_size": 3, "dim": 9973}}
