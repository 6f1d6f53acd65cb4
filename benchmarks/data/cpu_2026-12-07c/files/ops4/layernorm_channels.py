import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = nn.LayerNorm(32)

    def forward(self, x):
        return self.n(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def get_inputs():
    return [torch.randn(batch, 32, 16, 16)]


def get_init_inputs():
    return []
