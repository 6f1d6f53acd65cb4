"""Conv3d 3x3x3, padding 1, stride (1, 2, 2) (3 -> 5 channels, no bias) times 0.5 over (N, C, D, H, W)."""
import torch
import torch.nn as nn

batch_size = 2
depth = 5
height = 6
width = 7

VARIANTS = {"small": {"batch_size": 1, "depth": 4, "height": 5, "width": 5}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(3, 5, 3, stride=(1, 2, 2), padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) * 0.5


def get_inputs():
    return [torch.randn(batch_size, 3, depth, height, width)]


def get_init_inputs():
    return []
