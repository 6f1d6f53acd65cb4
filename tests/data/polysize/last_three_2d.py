"""The sum of the last three columns of a (batch, seq) tensor: the slice starts at seq - 3, a monomial and a
negative constant, which a seq below 3 makes negative (codegen/guards.py offset_checks)."""
import torch
import torch.nn as nn

batch = 4
seq = 6

VARIANTS = {
    "small": {"batch": 2, "seq": 5},
    "odd": {"batch": 3, "seq": 7},
}


class Model(nn.Module):
    def forward(self, x):
        return x[:, -3:].sum(1)


def get_inputs():
    return [torch.randn(batch, seq)]


def get_init_inputs():
    return []
