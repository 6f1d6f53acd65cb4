"""Elementwise maximum and minimum of two tensors: both keep NaN (tests: NaN/Inf semantics against eager, tests/test_ieee.py)."""
import torch
import torch.nn as nn

rows = 8
cols = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        return torch.maximum(x, y), torch.minimum(x, y)


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 4, "cols": 100}}
