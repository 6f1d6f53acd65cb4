"""silu(x @ Wg^T) * (y @ Wu^T): a gated product whose two products read different left operands. No dual GEMM
(plan/dual.py needs one A): two matmul groups, the gate's epilogue reading the up product, which the planner lists
after it (kernel.py must launch the up GEMM first)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 40
dim = 32
hidden = 48


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)

    def forward(self, x, y):
        return F.silu(self.gate(x)) * self.up(y)


def get_inputs():
    return [torch.randn(rows, dim), torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, hidden]
