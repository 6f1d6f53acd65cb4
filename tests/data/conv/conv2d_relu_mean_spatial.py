"""Conv2d 3 x 3 (4 -> 20 channels, padding 1), ReLU, then the mean over the spatial axes (2, 3) with keepdim, times
2, plus a bias per channel: a column tail (a sum, then a division, a scale and a bias add of the (n, channel) values).
The spatial size varies per call."""
import torch
import torch.nn as nn

batch_size = 2
height, width = 5, 7

VARIANTS = {"small": {"batch_size": 2, "height": 3, "width": 4}, "tall": {"batch_size": 3, "height": 9, "width": 6}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 20, 3, padding=1)
        self.bias = nn.Parameter(torch.randn(20, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)).mean(dim=(2, 3), keepdim=True) * 2.0 + self.bias


def get_inputs():
    return [torch.randn(batch_size, 4, height, width)]


def get_init_inputs():
    return []
