"""ConvTranspose1d 4 taps, stride 3, padding 2, output_padding 2, dilation 2 (5 -> 6 channels, bias) then ReLU."""
import torch
import torch.nn as nn

batch_size = 2
length = 9

VARIANTS = {"small": {"batch_size": 1, "length": 6}, "odd": {"batch_size": 3, "length": 11}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose1d(5, 6, 4, stride=3, padding=2, output_padding=2, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, 5, length)]


def get_init_inputs():
    return []
