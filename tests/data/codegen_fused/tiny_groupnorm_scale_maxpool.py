"""GroupNorm, a per-channel scale, a 2x2 max pool and a clamp (KernelBench's 85_Conv2d_GroupNorm_Scale_MaxPool_Clamp
in small, without its convolution): the norm's normalising tail, whose first members are at the group shape
(N, G, C/G·H·W) and the rest at the pool input's (N, C, H, W), is the pool's prologue; the norm's group writes its
mean and reciprocal deviation only."""
import torch
import torch.nn as nn

batch_size = 2
channels = 8
height = 6
width = 10
groups = 4


class Model(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.scale = nn.Parameter(torch.randn(channels, 1, 1) * 0.5 + 1.0)
        self.pool = nn.MaxPool2d(2)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.pool(self.norm(x) * self.scale), -1.0, 1.5)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2.0 + 0.5]


def get_init_inputs():
    return [channels, groups]


VARIANTS = {"small": {"batch_size": 1, "channels": 12, "height": 4, "width": 4},
            "odd": {"batch_size": 3, "channels": 4, "height": 7, "width": 9}}
