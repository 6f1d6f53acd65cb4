"""A pointwise op, a concatenation of three operands of different, independently varying sizes along axis 1 (two
inner boundaries and a total that are sums), then a pointwise op over the whole result."""
import torch
import torch.nn as nn

batch = 3
a = 5
b = 2
c = 7
width = 6

VARIANTS = {
    "small": {"batch": 2, "a": 3, "b": 4, "c": 1, "width": 4},
    "odd": {"batch": 1, "a": 2, "b": 3, "c": 5, "width": 3},
}


class Model(nn.Module):
    def forward(self, x, y, z):
        return torch.sigmoid(torch.cat([x * 2.0, y, z + 1.0], dim=1)) + 0.5


def get_inputs():
    return [torch.randn(batch, a, width), torch.randn(batch, b, width), torch.randn(batch, c, width)]


def get_init_inputs():
    return []
