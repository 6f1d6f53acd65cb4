"""relu then MaxPool2d 2x2 over its transpose: the pool reads the relu through a view, not as the prologue
iterates it."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
height = 12
width = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(x).transpose(2, 3))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
