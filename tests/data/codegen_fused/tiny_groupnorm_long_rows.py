"""GroupNorm whose rows are long at the default shape and short in its variants (tests: a split-rows schedule tuned
on the long rows, launched on the short ones, takes no more programs a row than the row has tiles)."""
import torch
import torch.nn as nn

batch_size = 2
num_channels = 8
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, num_channels, height, width)]


def get_init_inputs():
    return [2, num_channels]   # two groups: rows of 4 x 64 x 64 = 16384 as written


VARIANTS = {"small": {"batch_size": 2, "num_channels": 8, "height": 8, "width": 8},      # rows of 256
            "odd": {"batch_size": 3, "num_channels": 6, "height": 9, "width": 15}}      # rows of 405
