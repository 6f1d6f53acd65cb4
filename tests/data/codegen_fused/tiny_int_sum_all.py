"""Sum of a whole int64 tensor with large values (tests: a split integer sum must stay exact)."""
import torch
import torch.nn as nn

dim0 = 64
dim1 = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x)


def get_inputs():
    return [torch.randint(0, 1 << 30, (dim0, dim1))]


def get_init_inputs():
    return []


VARIANTS = {"small": {"dim0": 32, "dim1": 64}, "odd": {"dim0": 33, "dim1": 71}}
