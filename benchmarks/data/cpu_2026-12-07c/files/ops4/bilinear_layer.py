import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Bilinear(32, 32, 16)

    def forward(self, x):
        return self.l(x, x * 2)


def get_inputs():
    return [torch.randn(batch, 32)]


def get_init_inputs():
    return []
