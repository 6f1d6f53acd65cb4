"""A random reference (referee tests): adds torch.rand_like noise in forward. Refused by the referee."""
import torch
import torch.nn as nn

batch_size = 8
dim = 64
VARIANTS = {"small": {"batch_size": 4, "dim": 32}, "odd": {"batch_size": 3, "dim": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) + 0.1 * torch.rand_like(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
