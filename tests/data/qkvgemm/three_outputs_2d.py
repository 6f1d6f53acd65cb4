"""Three products of one 2-d x, returned as they are (no consumer combines them), one with a bias and GELU, one with
a bias, one plain, and of three widths: one horizontal GEMM kernel (plan/horizontal.py) that stores all three, each
after its own epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 40
dim = 48
widths = (64, 40, 24)

VARIANTS = {"small": {"rows": 16, "dim": 32},
            "odd": {"rows": 37, "dim": 80}}


class Model(nn.Module):
    def __init__(self, dim: int, widths: tuple[int, int, int]):
        super().__init__()
        self.a = nn.Linear(dim, widths[0])
        self.b = nn.Linear(dim, widths[1])
        self.c = nn.Linear(dim, widths[2], bias=False)

    def forward(self, x: torch.Tensor):
        return F.gelu(self.a(x)), self.b(x), self.c(x)


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, widths]
