"""torch.div with rounding_mode "floor" and "trunc", on integers of both signs and on floats: Triton's integer //
truncates, so floor division of a negative quotient with a remainder must round down itself."""

import torch
import torch.nn as nn

batch_size = 64
dim = 512


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, a, b, x):
        floor = torch.div(a, b, rounding_mode="floor")
        trunc = torch.div(a, b, rounding_mode="trunc")
        return (floor * 1000 + trunc).to(torch.float32) + torch.div(x, 0.75, rounding_mode="trunc")


def get_inputs():
    a = torch.randint(-500, 500, (batch_size, dim))
    b = torch.randint(1, 9, (batch_size, dim)) * (torch.randint(0, 2, (batch_size, dim)) * 2 - 1)
    return [a, b, torch.randn(batch_size, dim) * 4]


def get_init_inputs():
    return []
