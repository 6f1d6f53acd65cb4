"""GeGLU on 2-d rows with biases: gelu(x @ W1^T + b1) * (x @ W2^T + b2). Each product takes its bias as an epilogue,
and the gated product reads both: one dual GEMM kernel (plan/dual.py). Odd sizes: edge tiles in M, N and K."""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 50
dim = 40
hidden = 36


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(dim, hidden)

    def forward(self, x):
        return F.gelu(self.w1(x)) * self.w2(x)


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, hidden]
