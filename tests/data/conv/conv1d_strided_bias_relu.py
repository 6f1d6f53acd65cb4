"""Conv1d 5 taps, stride 2, padding 3, dilation 2 (4 -> 6 channels, bias) then ReLU over (N, C, L)."""
import torch
import torch.nn as nn

batch_size = 2
length = 19

VARIANTS = {"small": {"batch_size": 1, "length": 13}, "odd": {"batch_size": 3, "length": 22}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 5, stride=2, padding=3, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, 4, length)]


def get_init_inputs():
    return []
