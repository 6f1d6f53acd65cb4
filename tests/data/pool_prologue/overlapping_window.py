"""MaxPool2d kernel 3, stride 1, padding 1 after relu: every element is read by 9 windows, past the
recompute limit, so the relu stays a kernel of its own."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
height = 12
width = 12


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=1, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(x))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
