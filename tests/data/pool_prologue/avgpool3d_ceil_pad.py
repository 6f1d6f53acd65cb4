"""AvgPool3d kernel 3, stride 2, padding 1, ceil mode (padded zeros count in the divisor, the window clipped
to the padded input) after relu(x) + a per-channel bias."""
import torch
import torch.nn as nn

batch_size = 2
channels = 3
depth = 8
height = 10
width = 12

VARIANTS = {
    "small": {"batch_size": 2, "depth": 5, "height": 6, "width": 7},
    "odd": {"batch_size": 3, "depth": 7, "height": 9, "width": 6},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1, 1, 1))
        self.pool = nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
