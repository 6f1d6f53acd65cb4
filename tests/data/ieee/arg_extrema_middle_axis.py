"""Argmax, argmin and amax over the middle axis (a strided reduction: rows are the contiguous axis): the first NaN's index where a column holds one (tests: NaN/Inf semantics against eager, tests/test_ieee.py)."""
import torch
import torch.nn as nn

batch = 2
dim1 = 40
dim2 = 37


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.argmax(x, dim=1), torch.argmin(x, dim=1), torch.amax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, dim1, dim2)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 2, "dim1": 20, "dim2": 19}}
