"""AvgPool1d kernel 4, stride 2, padding 2, ceil mode, count_include_pad=False after sigmoid(x) + a
per-channel bias: prologue(0) is not 0, so a padded position read as prologue(0) would change the sum."""
import torch
import torch.nn as nn

batch_size = 4
channels = 8
length = 40

VARIANTS = {
    "small": {"batch_size": 2, "length": 17},
    "odd": {"batch_size": 3, "length": 31},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1))
        self.pool = nn.AvgPool1d(4, stride=2, padding=2, ceil_mode=True, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.sigmoid(x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
