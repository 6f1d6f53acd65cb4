"""Products of few long rows and of a whole tensor (issue #14): the forms that split a row over programs (split
rows, the whole-tensor split) combine the chunks' partial products."""
import torch
import torch.nn as nn

rows = 3
length = 700


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        decay = 1.0 + 0.01 * torch.tanh(x)                   # (R, L)
        return torch.prod(decay, dim=1), torch.prod(decay)


def get_inputs():
    return [torch.randn(rows, length)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 2, "length": 300}, "odd": {"rows": 3, "length": 203}}
