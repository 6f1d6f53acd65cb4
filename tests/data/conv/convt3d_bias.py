"""ConvTranspose3d 3x3x3, stride (1, 2, 2), padding 1 (3 -> 4 channels, bias) over (N, C, D, H, W)."""
import torch
import torch.nn as nn

batch_size = 2
depth = 3
height = 3
width = 5

VARIANTS = {"small": {"batch_size": 1, "depth": 2, "height": 2, "width": 3}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(3, 4, 3, stride=(1, 2, 2), padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, 3, depth, height, width)]


def get_init_inputs():
    return []
