"""The mean of the last three steps of a (batch, seq, hidden) sequence: the slice starts at (seq - 3) * hidden, a sum
of two monomials in sizes that all vary (capture/polyfit.py)."""
import torch
import torch.nn as nn

batch = 4
seq = 6
hidden = 8

VARIANTS = {
    "small": {"batch": 2, "seq": 3, "hidden": 4},
    "odd": {"batch": 3, "seq": 5, "hidden": 7},
}


class Model(nn.Module):
    def forward(self, x):
        return x[:, -3:, :].mean(1)


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return []
