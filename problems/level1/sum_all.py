"""Sum of a whole 8192 x 16384 tensor to one scalar: memory-bound, 512 MiB read; needs a two-stage (or atomic) grid-wide reduction."""
import torch
import torch.nn as nn

dim0 = 8192
dim1 = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x)


def get_inputs():
    return [torch.randn(dim0, dim1)]


def get_init_inputs():
    return []
