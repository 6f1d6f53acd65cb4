"""Conv2d 3x3 (with bias) -> GroupNorm -> per-channel scale -> 2x2 max pool -> clamp, small (KernelBench level 2
#85 in miniature). With the library's convolution, its bias add is a pointwise node both the norm's statistics and
its normalising tail read: the pool computes the bias add again where it loads (with the tail, as its prologue), so
neither the biased nor the normalised tensor is written."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 10
width = 12
groups = 4


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.scale = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.5 + 1.0)
        self.pool = nn.MaxPool2d(2)
        with torch.no_grad():
            self.conv.bias.normal_(0.0, 1.0)   # large enough that a tail without it fails
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.pool(self.norm(self.conv(x)) * self.scale), -1.0, 1.5)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
