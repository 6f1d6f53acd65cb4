"""Natural log: log(0) = -inf, log(-x) = NaN (tests: NaN/Inf semantics against eager, tests/test_ieee.py)."""
import torch
import torch.nn as nn

rows = 8
cols = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.log(x)


def get_inputs():
    return [torch.rand(rows, cols) + 0.1]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 4, "cols": 100}}
