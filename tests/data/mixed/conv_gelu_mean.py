"""Conv2d 3x3 -> GELU -> global average pool, small: a tail that reduces the convolution's output over its spatial
dims (N, C, H, W) -> (N, C); channels-last, each row's elements are C apart (codegen/memory_format.py)."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 9
width = 10


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.conv(x)).mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
