import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(8, 16, 3, padding=1, padding_mode='reflect')

    def forward(self, x):
        return self.c(x)


def get_inputs():
    return [torch.randn(batch, 8, 32, 32)]


def get_init_inputs():
    return []
