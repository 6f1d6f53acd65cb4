"""Max and min over each row: NaN where the row holds one (torch.amax) (tests: NaN/Inf semantics against eager, tests/test_ieee.py)."""
import torch
import torch.nn as nn

rows = 8
cols = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.amax(x, dim=1), torch.amin(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 4, "cols": 100}}
