"""Clamp to [-0.5, 0.5]: torch.clamp keeps NaN (tests: NaN/Inf semantics against eager, tests/test_ieee.py)."""
import torch
import torch.nn as nn

rows = 8
cols = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.clamp(x, -0.5, 0.5)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 4, "cols": 100}}
