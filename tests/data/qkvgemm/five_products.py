"""Five products of one x, each returned: more than plan/horizontal.py's MAX_PRODUCTS (4) share a kernel, so the
plan makes one horizontal kernel of four and the fifth a GEMM of its own."""
import torch
import torch.nn as nn

rows = 24
dim = 32
width = 16


class Model(nn.Module):
    def __init__(self, dim: int, width: int):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(dim, width, bias=False) for _ in range(5))

    def forward(self, x: torch.Tensor):
        return tuple(h(x) for h in self.heads)


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, width]
