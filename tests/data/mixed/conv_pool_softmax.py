"""Conv2d 3x3 (with bias) -> ReLU -> MaxPool2d 2x2 -> softmax over channels, small: the issue's mixed-plan example
(the convolution is a library call, the tail generated kernels reading its output)."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 12
width = 10


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.pool(torch.relu(self.conv(x))), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
