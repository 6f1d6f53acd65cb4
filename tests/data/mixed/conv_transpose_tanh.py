"""ConvTranspose2d (stride 2, padding 1, output_padding 1, groups 2, no bias) -> subtract a per-channel bias ->
tanh, small: a transposed convolution as a library call, its output sizes derived on the host."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 4
out_channels = 6
height = 5
width = 7


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1,
                                       groups=2, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv(x) - self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
