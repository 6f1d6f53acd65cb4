"""Conv1d k=3 (4 -> 20 channels, padding 1, bias), ReLU, then the mean over the channels with keepdim: a row tail
(a sum, then a division of the row value)."""
import torch
import torch.nn as nn

batch_size = 2
length = 13

VARIANTS = {"small": {"batch_size": 1, "length": 6}, "odd": {"batch_size": 3, "length": 17}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 20, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)).mean(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, 4, length)]


def get_init_inputs():
    return []
