"""Conv2d -> x * a one-element parameter -> AvgPool2d -> + per-channel bias, small: the scale after the library's
convolution is loaded once per row of a tiled pointwise kernel (a scalar pointer under the row mask did not
compile: KernelBench level2 50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling on the H200, 2026-12-01)."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 12
width = 16


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, scale: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.scale = nn.Parameter(torch.tensor(scale))
        self.pool = nn.AvgPool2d(2)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.conv(x) * self.scale) + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 0.5]
