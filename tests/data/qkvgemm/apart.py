"""Products of one input that may not share a horizontal kernel: a product of a slice of x (another A view, another
K), a product of another input, and a product whose epilogue reads another's output (k's adds q's first columns). Of
the four products on x, only q and v (same A view, neither reading the other) share a kernel (plan/horizontal.py)."""
import torch
import torch.nn as nn

rows = 24
dim = 32


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.q = nn.Linear(dim, 48, bias=False)
        self.k = nn.Linear(dim, 32, bias=False)
        self.v = nn.Linear(dim, 32, bias=False)
        self.s = nn.Linear(dim // 2, 32, bias=False)
        self.y = nn.Linear(dim, 32, bias=False)

    def forward(self, x: torch.Tensor, z: torch.Tensor):
        q = self.q(x)
        k = self.k(x) + q[:, :32]
        return q, k, self.v(x), self.s(x[:, :16]), self.y(z)


def get_inputs():
    return [torch.randn(rows, dim), torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]
