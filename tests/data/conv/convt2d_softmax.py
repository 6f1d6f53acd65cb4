"""ConvTranspose2d 2x2 (4 -> 20 channels, stride 2, bias) then softmax over the channels, a learned bias
(20, 1, 1) added, times 2: a transposed convolution's whole-row tail (one tile over every channel, the gather form)
whose full-size members read a per-channel tensor outside the group."""
import torch
import torch.nn as nn

batch_size = 2
height = 3
width = 4

VARIANTS = {"small": {"batch_size": 1, "height": 2, "width": 3}, "odd": {"batch_size": 3, "height": 5, "width": 3}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(4, 20, 2, stride=2)
        self.bias = nn.Parameter(torch.randn(20, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid((torch.softmax(self.conv(x), dim=1) + self.bias) * 2.0)


def get_inputs():
    return [torch.randn(batch_size, 4, height, width)]


def get_init_inputs():
    return []
