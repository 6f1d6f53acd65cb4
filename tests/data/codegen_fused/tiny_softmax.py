"""Softmax over the rows of a small 2-D tensor (tests: the generate pipeline end to end, fast under the interpreter)."""
import torch
import torch.nn as nn

batch_size = 16
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch_size": 4, "dim": 128}, "odd": {"batch_size": 3, "dim": 203}}
