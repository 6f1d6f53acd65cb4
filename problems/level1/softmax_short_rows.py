"""Softmax over many short rows (1M rows of 128, like attention scores): memory-bound, one row per few lanes, 512 MiB each way."""
import torch
import torch.nn as nn

batch_size = 1048576
dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
