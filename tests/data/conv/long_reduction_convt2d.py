"""ConvTranspose2d 3x3 at stride 2 over 9000 input channels, bias: a long accumulation chain in both transposed forms
(phases: K = 9,000 x 4 taps; gather: 9,000 x 9; both > the chunked K loop's 2^15)."""
import torch
import torch.nn as nn

batch_size = 1
in_channels = 9000
height = 2
width = 3

VARIANTS = {"small": {"in_channels": 6, "height": 3}, "odd": {"batch_size": 2, "in_channels": 7, "width": 4},
            "third": {"batch_size": 3, "in_channels": 9, "height": 4, "width": 5}}


class Model(nn.Module):
    def __init__(self, in_channels: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, 3, 3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels]
