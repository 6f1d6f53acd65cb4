"""A linear layer on (B, T, D) followed by a learned per-position bias of (T, N): the bias's view over (B, T, N)
has strides (0, N, 1), which do not merge into one row axis of B*T rows, so the add cannot be planned at the
product's 2-d shape and stays a kernel of its own; a GELU after a plain residual add still joins its product."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 3
seq = 40
dim = 32
out = 48


class Model(nn.Module):
    def __init__(self, seq, dim, out):
        super().__init__()
        self.proj = nn.Linear(dim, out)
        self.pos = nn.Parameter(torch.randn(seq, out))
        self.fc = nn.Linear(out, out)

    def forward(self, x):
        h = self.proj(x) + self.pos
        return F.gelu(self.fc(h) + h)


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [seq, dim, out]
