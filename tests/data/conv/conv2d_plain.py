"""Conv2d 3x3 (3 -> 24 channels, padding 1), no bias (KernelBench level 1's default): a plain convolution."""
import torch
import torch.nn as nn

batch_size = 2
height = 5
width = 6

VARIANTS = {"small": {"batch_size": 1, "height": 4, "width": 3}, "odd": {"batch_size": 3, "height": 7, "width": 5}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 24, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return []
