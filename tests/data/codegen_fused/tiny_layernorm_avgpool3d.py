"""LayerNorm over the last axis of a 5-d tensor, then a 2x2x2 average pool and GELU (KernelBench's
3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU in small, without its convolution): the norm's normalising tail is the
pool's prologue, the norm's group writes its mean and reciprocal deviation only."""
import torch
import torch.nn as nn

batch_size = 2
channels = 3
depth = 4
height = 6
width = 16


class Model(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.pool = nn.AvgPool3d(2)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.pool(self.norm(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width) * 2.0 + 0.5]


def get_init_inputs():
    return [width]


VARIANTS = {"small": {"batch_size": 1, "channels": 2, "depth": 2, "height": 4, "width": 8},
            "odd": {"batch_size": 3, "channels": 2, "depth": 5, "height": 7, "width": 10}}
