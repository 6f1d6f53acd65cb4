"""Depthwise Conv2d 3x3, stride 2, padding 1, 5 groups with 2 output channels each (5 -> 10, bias) then ReLU6."""
import torch
import torch.nn as nn

batch_size = 2
height = 9
width = 10

VARIANTS = {"small": {"batch_size": 1, "height": 6, "width": 7}, "odd": {"batch_size": 3, "height": 11, "width": 5}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(5, 10, 3, stride=2, padding=1, groups=5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.relu6(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, 5, height, width)]


def get_init_inputs():
    return []
