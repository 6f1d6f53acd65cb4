"""Conv2d 3x3 (with bias) -> InstanceNorm2d -> divide, small (KernelBench level 2 #17 in miniature): the
library's convolution and one generated tail kernel, bias + statistics + normalisation, that reads its output as
(1, N*C, H, W), the view InstanceNorm lowers to (stride 1 on the leading 1)."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 6
height = 9
width = 11


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.InstanceNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x)) / 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
