"""MaxPool1d kernel 3, stride 2, padding 1, ceil mode, after a pointwise prologue with a per-channel
parameter, scale·(3 − x²): its largest value is at x = 0, so a padded position read as prologue(0) would win."""
import torch
import torch.nn as nn

batch_size = 4
channels = 8
length = 40

VARIANTS = {
    "small": {"batch_size": 2, "channels": 8, "length": 17},
    "odd": {"batch_size": 3, "channels": 8, "length": 31},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(channels, 1) + 0.5)
        self.pool = nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.scale * (3.0 - x * x))


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
