"""Training-mode BatchNorm3d (statistics over N, D, H, W per channel: few rows, each strided across the tensor)
(tests: split rows with Welford partials; KernelBench's 72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool in small)."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
depth = 6
height = 10
width = 12


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm3d(channels)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.1)
            self.bn.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width) * 3.0 + 1.0]


def get_init_inputs():
    return [channels]


VARIANTS = {"small": {"batch_size": 2, "channels": 3, "depth": 4, "height": 8, "width": 8},
            "odd": {"batch_size": 3, "channels": 5, "depth": 3, "height": 7, "width": 11}}
