"""Conv2d 3x3 with bias (3 -> 8 channels), subtract, hardswish, then max pool 2: the conv group is the convolution and
its pointwise epilogue, read by the pool's group, so the LIBRARY knob would write that epilogue's result once more
where generate's second pass fuses it into the pool as its prologue (codegen/conv_library.py's takes_library)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
height = 8
width = 10

VARIANTS = {"small": {"batch_size": 1, "height": 6, "width": 6}, "odd": {"batch_size": 3, "height": 9, "width": 7}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(F.hardswish(self.conv(x) - 0.5))


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return []
