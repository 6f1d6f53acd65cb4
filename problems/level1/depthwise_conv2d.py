"""Depthwise conv2d 3x3 (groups = channels = 256) on 16 x 256 x 128 x 128 (MobileNet-like): memory-bound, 9 MACs per element, 256 MiB each way."""
import torch
import torch.nn as nn

batch_size = 16
channels = 256
kernel_size = 3
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
