"""HardSwish (x * relu6(x + 3) / 6) on 4096 x 65536: piecewise-linear, purely memory-bound."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
