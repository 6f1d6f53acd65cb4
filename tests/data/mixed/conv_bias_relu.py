"""Conv2d 3x3 (with bias) -> ReLU, small: the library's convolution (its bias left out of the call) and one
generated tail kernel, bias + ReLU, that reads the convolution's output once."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 9
width = 11


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
