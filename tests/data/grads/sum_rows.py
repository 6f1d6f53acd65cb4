"""Float64 sum over the last axis, for gradcheck."""
import torch
import torch.nn as nn

rows = 6
cols = 10


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float64)]


def get_init_inputs():
    return []
