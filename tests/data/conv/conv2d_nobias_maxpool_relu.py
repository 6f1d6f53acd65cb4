"""Conv2d 3x3 without bias (3 -> 8 channels), then max pool 2 and relu: the conv group is the convolution alone (the
pool is an anchor of its own), so the conv group's LIBRARY knob has nothing to fuse."""
import torch
import torch.nn as nn

batch_size = 2
height = 8
width = 10

VARIANTS = {"small": {"batch_size": 1, "height": 6, "width": 6}, "odd": {"batch_size": 3, "height": 9, "width": 7}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=False)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.pool(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return []
