"""Conv2d 3 x 3 (3 -> 20 channels, stride 2) then amax over the spatial axes (2, 3), not keepdim: a column tail of
a max (a NaN kept, as torch.amax)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 20, 3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(self.conv(x), dim=(2, 3))


def get_inputs():
    return [torch.randn(2, 3, 13, 11)]


def get_init_inputs():
    return []
