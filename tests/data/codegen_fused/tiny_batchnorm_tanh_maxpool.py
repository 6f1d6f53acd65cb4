"""Training-mode BatchNorm2d, tanh, then a 2x2 max pool (KernelBench's 11_ConvTranspose2d_BatchNorm_Tanh_MaxPool_
GroupNorm in small, without its convolution): the norm's normalising tail and the tanh are the pool's prologue, the
norm's group writes its statistics only."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
height = 10
width = 12


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.pool = nn.MaxPool2d(2)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.1)
            self.bn.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.tanh(self.bn(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 3.0 + 1.0]


def get_init_inputs():
    return [channels]


VARIANTS = {"small": {"batch_size": 2, "channels": 3, "height": 8, "width": 8},
            "odd": {"batch_size": 3, "channels": 5, "height": 7, "width": 11}}
