"""AvgPool3d kernel 3, stride 2, padding 1 over (N, C, D, H, W); padded zeros count in the divisor."""
import torch
import torch.nn as nn

batch_size = 2
channels = 3  # the same in every variant: a stride of C·D·H·W would need four factors
depth = 16
height = 16
width = 16

VARIANTS = {
    "small": {"batch_size": 2, "depth": 8, "height": 10, "width": 12},
    "odd": {"batch_size": 3, "depth": 9, "height": 11, "width": 13},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
