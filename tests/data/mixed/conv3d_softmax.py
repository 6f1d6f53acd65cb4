"""Conv3d 3x3x3 -> softmax over channels -> * 2, small: a 3-d library convolution and a tail that reduces over
its channels (contiguous in the channels-last-3d layout, codegen/memory_format.py)."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 6
depth = 5
height = 6
width = 7


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.conv(x), dim=1) * 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
