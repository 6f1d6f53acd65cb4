"""ConvTranspose2d 3x3 at stride 1, padding 1, 36 -> 5 channels, bias: a stride-1 transposed convolution whose taps'
channels fill a K step, so the taps-outer gather form is the default (codegen/conv.py: KernelBench 57's form)."""
import torch
import torch.nn as nn

batch_size = 2
height = 5
width = 6

VARIANTS = {"small": {"batch_size": 1, "height": 4}, "odd": {"batch_size": 3, "width": 7}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(36, 5, 3, stride=1, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, 36, height, width)]


def get_init_inputs():
    return []
