"""Mean over the middle axis of 64 x 4096 x 1024 (a strided reduction: the reduced axis is not contiguous): memory-bound, 1 GiB read."""
import torch
import torch.nn as nn

batch_size = 64
dim1 = 4096
dim2 = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return []
