"""A per-channel affine (x * a + b), GroupNorm, then the mean over (C, H, W) (KernelBench level-2 23's shape of work
after a library convolution's bias add, without the convolution): the affine is a full-size member the norm's
statistics read, and the mean's group computes it again where it loads, with the normalising tail, so the norm's
group writes only its mean and reciprocal deviation."""
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
        self.a = nn.Parameter(torch.randn(channels, 1, 1) * 0.5 + 1.0)
        self.b = nn.Parameter(torch.randn(channels, 1, 1))
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.3)
            self.norm.bias.normal_(0.0, 0.3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x * self.a + self.b).mean(dim=(1, 2, 3))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2.0 + 0.5]


def get_init_inputs():
    return [channels, groups]


VARIANTS = {"small": {"batch_size": 1, "channels": 12, "height": 4, "width": 4},
            "odd": {"batch_size": 3, "channels": 20, "height": 7, "width": 9}}
