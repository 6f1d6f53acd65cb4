"""Conv2d 3x3 -> BatchNorm2d (training: the batch's statistics) -> global average pool, small: KernelBench level-2
77's tail in 2-d. Two reductions read the convolution's output: the statistics over (N, H, W) per channel and the
pool over (H, W) per sample and channel; channels-last, both are strided (the channels, their rows, contiguous:
codegen/fused's memory_order)."""
import torch
import torch.nn as nn

batch_size = 3
in_channels = 3
out_channels = 8
height = 11
width = 12


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x)).mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
