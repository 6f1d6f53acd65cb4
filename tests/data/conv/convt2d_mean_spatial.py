"""ConvTranspose2d 3x3 (3 -> 20 channels, stride 2, padding 1, output_padding 1, bias) times 1.5 then the mean over
(2, 3), keepdim: a transposed convolution's column tail (per-image tiles, the gather form)."""
import torch
import torch.nn as nn

batch_size = 2
height = 5
width = 4

VARIANTS = {"small": {"batch_size": 1, "height": 3, "width": 3}, "odd": {"batch_size": 3, "height": 6, "width": 3}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(3, 20, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(self.conv(x) * 1.5, dim=(2, 3), keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return []
