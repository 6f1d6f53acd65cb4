"""A SwiGLU MLP whose input also feeds a third product returned beside it: the gate and up products are a dual pair
(plan/dual.py: the epilogue reads both, the up product is never written), which wins over a horizontal merge; the
third product stays a GEMM of its own (plan/horizontal.py takes single products only)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 24
dim = 32
hidden = 48


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.extra = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor):
        return F.silu(self.gate(x)) * self.up(x), self.extra(x)


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, hidden]
