"""MaxPool1d kernel 8, stride 1, padding 4, dilation 3 over (N, C, L) (KernelBench 41's window at a small size):
neighbouring outputs share 7 of their 8 inputs along the last axis, what the span schedule (SPAN=1) loads once."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
length = 64

VARIANTS = {
    "odd": {"batch_size": 3, "channels": 5, "length": 45},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(8, stride=1, padding=4, dilation=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
