"""Conv2d 3x3 (no bias) -> AvgPool2d 3x3, stride 1, padding 1, count_include_pad=False, small: the pool reads the
convolution's output itself (no prologue), kept channels-last it walks rows with the channel innermost."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 12
width = 10


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
