"""relu then MaxPool2d 2x2, the relu also a result of the module: it must be written anyway, so it is not
the pool's prologue."""
import torch
import torch.nn as nn

batch_size = 2
channels = 4
height = 12
width = 12


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.relu(x)
        return self.pool(y), y


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
