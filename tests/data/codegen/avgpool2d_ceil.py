"""AvgPool2d kernel 3, stride 2, padding 1, ceil_mode=True, count_include_pad=False over (N, C, H, W):
partial last windows, divisor counts only the elements inside the input."""
import torch
import torch.nn as nn

batch_size = 4
channels = 8
height = 32
width = 32

VARIANTS = {
    "small": {"batch_size": 2, "channels": 4, "height": 16, "width": 20},
    "odd": {"batch_size": 3, "channels": 5, "height": 17, "width": 24},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
