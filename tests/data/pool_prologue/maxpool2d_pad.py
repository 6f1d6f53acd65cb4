"""MaxPool2d kernel 3, stride 2, padding 1 after exp(−x²) + a per-channel bias: the prologue is largest at
x = 0, so a padded position read as prologue(0) would win the max."""
import torch
import torch.nn as nn

batch_size = 2
channels = 6
height = 20
width = 24

VARIANTS = {
    "small": {"batch_size": 2, "height": 9, "width": 12},
    "odd": {"batch_size": 3, "height": 13, "width": 11},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.exp(-x * x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
