"""Sum of a whole small 2-D tensor to one scalar (tests: the SPLIT whole-tensor reduction)."""
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
    return [torch.randn(dim0, dim1)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"dim0": 32, "dim1": 64}, "odd": {"dim0": 33, "dim1": 71}}
