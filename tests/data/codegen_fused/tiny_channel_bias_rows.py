"""A per-channel bias and an activation over rows whose length is a multiple of 4 but not of 16 (a convolution's
output after its bias: 3,060 = 4 x 765): the rows are walked in chunks, and the row starts are hinted aligned."""
import torch
import torch.nn as nn

batch_size = 4
channels = 8
length = 3060


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias) * 0.5


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]


VARIANTS = {"small": {"batch_size": 2, "channels": 3, "length": 1028}, "odd": {"batch_size": 3, "channels": 5, "length": 1031}}
