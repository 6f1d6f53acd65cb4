"""AvgPool2d kernel 3, stride 2, padding 1 (padded zeros count in the divisor) after tanh(scale·x) + 1, the
scale a one-element parameter: prologue(0) = 1, so a padded position read as prologue(0) would change the sum."""
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
        self.scale = nn.Parameter(torch.tensor(1.5))
        self.pool = nn.AvgPool2d(3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.tanh(x * self.scale) + 1.0)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
