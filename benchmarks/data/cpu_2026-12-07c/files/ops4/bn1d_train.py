import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = nn.BatchNorm1d(64)

    def forward(self, x):
        return self.n(x)


def get_inputs():
    return [torch.randn(batch, 64)]


def get_init_inputs():
    return []
