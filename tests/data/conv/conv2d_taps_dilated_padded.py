"""Conv2d 3x5 kernel, padding (1, 4), dilation (2, 3) over 36 input channels (-> 12, bias) then ReLU: padded windows
and >= 32 input channels, so K runs in the tap order by default (codegen/conv.py), 36 channels a tile and a tail."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 36
height = 7
width = 9

VARIANTS = {"small": {"batch_size": 1, "in_channels": 33, "height": 5}, "odd": {"in_channels": 17, "width": 11}}


class Model(nn.Module):
    def __init__(self, in_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, 12, (3, 5), padding=(1, 4), dilation=(2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels]
