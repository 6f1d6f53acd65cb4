import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.EmbeddingBag(100, 32, mode='mean')

    def forward(self, x):
        return self.e(x)


def get_inputs():
    return [torch.randint(0, 100, (batch, 8))]


def get_init_inputs():
    return []
