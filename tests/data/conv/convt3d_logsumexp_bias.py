"""ConvTranspose3d 3x3x3 (3 -> `channels`, stride 2, padding 1, bias) then logsumexp over the channels, a hardswish
and a learned scalar (1, 1, 1, 1) subtracted, clamped: a transposed convolution's row tail whose per-row members
read a tensor outside the group (a broadcast scalar), over a channel count that varies per call (fewer in the
variants, as KernelBench's derived variants have)."""
import torch
import torch.nn as nn

batch_size = 2
depth = 3
height = 3
width = 2
channels = 20

VARIANTS = {"small": {"batch_size": 1, "depth": 2, "height": 2, "width": 2, "channels": 8},
            "odd": {"batch_size": 3, "depth": 2, "height": 3, "width": 3, "channels": 13}}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(3, channels, 3, stride=2, padding=1)
        self.bias = nn.Parameter(torch.randn(1, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.logsumexp(self.conv(x), dim=1, keepdim=True)
        x = x * torch.sigmoid(x + 3) / 6
        return torch.clamp(x - self.bias, min=-1, max=1)


def get_inputs():
    return [torch.randn(batch_size, 3, depth, height, width)]


def get_init_inputs():
    return [channels]
