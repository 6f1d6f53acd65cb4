"""A decode step's projections: one token (x of 1 x D), three products of one row each. Matrix-vector products keep
their GEMV kernels (plan/horizontal.py merges no product whose M or N is 1): three matmul groups."""
import torch
import torch.nn as nn

dim = 64


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim // 2, bias=False)
        self.v = nn.Linear(dim, dim // 2, bias=False)

    def forward(self, x: torch.Tensor):
        return self.q(x), self.k(x), self.v(x)


def get_inputs():
    return [torch.randn(1, dim)]


def get_init_inputs():
    return [dim]
