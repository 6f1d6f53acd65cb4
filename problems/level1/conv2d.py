"""Conv2d 3x3, padding 1, 64 -> 128 channels on 32 x 64 x 128 x 128 (ResNet-like): compute-bound (77 GFLOP), 128 MiB in, 256 MiB out."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
kernel_size = 3
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
