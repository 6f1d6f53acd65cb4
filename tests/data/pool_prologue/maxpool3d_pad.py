"""MaxPool3d kernel 3, stride 2, padding 1 after −scale·x² (scale > 0, a one-element parameter): every real value
is below prologue(0) = 0, so a padded position read as prologue(0) would win the max."""
import torch
import torch.nn as nn

batch_size = 2
channels = 3
depth = 8
height = 10
width = 12

VARIANTS = {
    "small": {"batch_size": 2, "depth": 5, "height": 6, "width": 7},
    "odd": {"batch_size": 3, "depth": 7, "height": 9, "width": 5},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(0.75))
        self.pool = nn.MaxPool3d(3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(-self.scale * (x * x))


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
