import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose1d(8, 16, 4, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.c(x))


def get_inputs():
    return [torch.randn(batch, 8, 64)]


def get_init_inputs():
    return []
