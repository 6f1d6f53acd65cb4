"""GroupNorm, then the mean of its output over all but the batch axis (KernelBench's 23_Conv3d_GroupNorm_Mean in
small, without its convolution): the norm's normalising tail moves to the mean's group, which computes it where it
loads; the norm's group writes its mean and reciprocal deviation only."""
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
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x).mean(dim=[1, 2, 3])


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2.0 + 0.5]


def get_init_inputs():
    return [channels, groups]


VARIANTS = {"small": {"batch_size": 4, "channels": 12, "height": 4, "width": 4},
            "odd": {"batch_size": 3, "channels": 4, "height": 7, "width": 9}}
