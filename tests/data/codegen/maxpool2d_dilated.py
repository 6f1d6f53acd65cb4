"""MaxPool2d kernel 3, stride 2, padding 1, dilation 2 over (N, C, H, W)."""
import torch
import torch.nn as nn

batch_size = 4
channels = 8
height = 32
width = 32

VARIANTS = {
    "small": {"batch_size": 2, "channels": 4, "height": 16, "width": 20},
    "odd": {"batch_size": 3, "channels": 5, "height": 17, "width": 23},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
