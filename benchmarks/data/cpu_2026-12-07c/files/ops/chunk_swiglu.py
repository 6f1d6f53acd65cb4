import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(128, 512)

    def forward(self, *args):
        if len(args) == 1:
            x = args[0]
        a, b, c = (list(args) + [None] * 3)[:3]
        x = args[0]
        idx = t = args[-1]
        a, b = self.l(x).chunk(2, dim=-1)
        return F.silu(a) * b


def get_inputs():
    return [torch.randn(batch, 128)]


def get_init_inputs():
    return []
