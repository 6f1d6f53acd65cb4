"""A constructor that reads module-level sizes instead of taking them as arguments (KernelBench level-3
33_VanillaRNN builds its hidden state from the module's `batch_size` so): kernel.py copies the constants with their
default values, so the referee's variants must reach kernel.py's copies too, or ModelNew is built at the default
sizes and the reference's state_dict does not load."""

import torch
import torch.nn as nn

batch = 3
seq = 24
dim = 16
hidden = 40


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.proj = nn.Linear(dim, hidden)
        self.pos = nn.Parameter(torch.randn(seq, hidden))
        self.register_buffer("h0", torch.randn(batch, 1, hidden))

    def forward(self, x):
        return torch.tanh(self.proj(x) + self.pos + self.h0)


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return []
