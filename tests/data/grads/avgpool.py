"""Float64 AvgPool2d 3x3, stride 2, padding 1, for gradcheck."""
import torch
import torch.nn as nn

batch = 2
channels = 3
height = 6
width = 7


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.float64)]


def get_init_inputs():
    return []
