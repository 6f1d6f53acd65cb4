import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.adaptive_max_pool2d(x, 4)


def get_inputs():
    return [torch.randn(batch, 8, 32, 32)]


def get_init_inputs():
    return []
