"""MaxPool2d kernel 4, stride 1, padding 1 over (N, C, H, W) (KernelBench 42's window at a small size): neighbouring
output rows share three of their four input rows, what the sliding schedule (ROWS > 1) loads once."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
height = 18
width = 20

VARIANTS = {
    "small": {"batch_size": 1, "channels": 3, "height": 9, "width": 12},
    "odd": {"batch_size": 3, "channels": 5, "height": 14, "width": 11},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(4, stride=1, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
