"""Inclusive prefix sum along rows of 8192 x 16384: memory-bound scan (512 MiB each way); a row is longer than one block, so it needs a carried scan."""
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384

# Rows stay long (several blocks) so the carried scan is exercised; the derived variants would shrink them to ~256.
VARIANTS = {
    "small": {"batch_size": 4, "dim": 8192},
    "odd": {"batch_size": 3, "dim": 9973},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
