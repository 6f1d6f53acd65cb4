"""Conv2d 3x3 over 4100 input channels (K = 36,900 > the chunked K loop's 2^15), bias: a long accumulation chain."""
import torch
import torch.nn as nn

batch_size = 1
in_channels = 4100
height = 4
width = 5

VARIANTS = {"small": {"in_channels": 6, "height": 3}, "odd": {"batch_size": 2, "in_channels": 7, "width": 6},
            "third": {"batch_size": 3, "in_channels": 9, "height": 5, "width": 7}}


class Model(nn.Module):
    def __init__(self, in_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, 3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels]
