import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(32, 32, 7, padding=3, groups=32)

    def forward(self, x):
        return self.c(x)


def get_inputs():
    return [torch.randn(batch, 32, 128)]


def get_init_inputs():
    return []
