import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(64, 48)

    def forward(self, x):
        return self.l(x)


def get_inputs():
    return [torch.randn(batch, 16, 64)]


def get_init_inputs():
    return []
