"""Conv2d 3x2 kernel, stride (2, 1), padding (1, 0), dilation (1, 2), 2 groups (6 -> 8 channels, bias) then ReLU."""
import torch
import torch.nn as nn

batch_size = 2
height = 9
width = 11

VARIANTS = {"small": {"batch_size": 1, "height": 7, "width": 8}, "odd": {"batch_size": 3, "height": 10, "width": 9}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 8, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, 6, height, width)]


def get_init_inputs():
    return []
