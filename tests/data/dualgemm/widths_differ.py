"""gelu(x @ W1^T) * (x @ W2^T)[:, :N]: one A, but the second product is wider (its N differs) and is read through a
slice. No dual GEMM (plan/dual.py needs M, N and K to agree): two matmul groups."""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 40
dim = 32
hidden = 48


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(dim, hidden + 16, bias=False)
        self.hidden = hidden

    def forward(self, x):
        return F.gelu(self.w1(x)) * self.w2(x)[:, :self.hidden]


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, hidden]
