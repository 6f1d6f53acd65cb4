"""ConvTranspose2d 3x3 (3 -> 24 channels, stride 2, padding 1, output_padding 1, bias) then logsumexp over the
channels of values far from 0: a transposed convolution's row tail with a shifted sum (the gather form)."""
import torch
import torch.nn as nn

batch_size = 2
height = 4
width = 3

VARIANTS = {"small": {"batch_size": 1, "height": 3, "width": 3}, "odd": {"batch_size": 3, "height": 5, "width": 2}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(3, 24, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(30.0 * self.conv(x) + 60.0, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return []
