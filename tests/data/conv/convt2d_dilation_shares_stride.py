"""ConvTranspose2d 3x3, stride 2, dilation (2, 3), padding (1, 2), 2 groups (4 -> 6 channels, bias) then tanh: along H
gcd(stride, dilation) = 2, so the phases where 2 does not divide phase + padding get no tap at all (bias only)."""
import torch
import torch.nn as nn

batch_size = 2
height = 4
width = 5

VARIANTS = {"small": {"batch_size": 1, "height": 2, "width": 3}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=(1, 2), dilation=(2, 3), groups=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, 4, height, width)]


def get_init_inputs():
    return []
