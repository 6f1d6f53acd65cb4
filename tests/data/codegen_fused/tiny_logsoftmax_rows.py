"""Log-softmax over the rows of a small 2-D tensor, rows no multiple of a wave (tests: windowed split rows)."""
import torch
import torch.nn as nn

batch_size = 10
dim = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch_size": 4, "dim": 128}, "odd": {"batch_size": 3, "dim": 203}}
