"""Max over the first (outermost) axis of 4096 x 65536: a column reduction with coalesced loads across columns, 1 GiB read, 256 KiB written."""
import torch
import torch.nn as nn

dim0 = 4096
dim1 = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=0)


def get_inputs():
    return [torch.randn(dim0, dim1)]


def get_init_inputs():
    return []
