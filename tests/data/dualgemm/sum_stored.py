"""x @ W1 + x @ W2 where the second product is also an output: the pair is still one kernel (A read once), and the
second product is a stored member of it."""

import torch
import torch.nn as nn

rows = 33
dim = 24
hidden = 40


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(dim, hidden) / dim ** 0.5)
        self.w2 = nn.Parameter(torch.randn(dim, hidden) / dim ** 0.5)

    def forward(self, x):
        b = x @ self.w2
        return x @ self.w1 + b, b


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim, hidden]
