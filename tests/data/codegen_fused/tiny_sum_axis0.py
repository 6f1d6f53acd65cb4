"""Sum over the first (non-trailing) axis of a small 2-D tensor (tests: strided rows, XBLOCK > 1)."""
import torch
import torch.nn as nn

rows = 96
cols = 160


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 32, "cols": 64}, "odd": {"rows": 37, "cols": 101}}
