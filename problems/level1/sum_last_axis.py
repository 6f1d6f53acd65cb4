"""Sum over the last (contiguous) axis of 64 x 1024 x 4096: memory-bound row reduction, 1 GiB read, 256 KiB written."""
import torch
import torch.nn as nn

batch_size = 64
rows = 1024
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []
