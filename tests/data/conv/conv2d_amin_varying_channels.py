"""Conv2d 3x3 (3 -> `channels`, bias) then amin over the channels, the channel count different in each variant:
the tile form of the row tail (one tile or partials) is decided per call."""
import torch
import torch.nn as nn

batch_size = 2
channels = 24
size = 6

VARIANTS = {"small": {"batch_size": 1, "channels": 12, "size": 5}, "odd": {"batch_size": 3, "channels": 20, "size": 7}}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amin(self.conv(x), dim=1)


def get_inputs():
    return [torch.randn(batch_size, 3, size, size)]


def get_init_inputs():
    return [channels]
