"""Float64 Conv2d (a library call in kernel.py) then a generated bias-and-tanh epilogue, for gradcheck."""
import torch
import torch.nn as nn

batch = 2
in_channels = 3
out_channels = 4
size = 6


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, dtype=torch.float64)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(batch, in_channels, size, size, dtype=torch.float64)]


def get_init_inputs():
    return [in_channels, out_channels]
