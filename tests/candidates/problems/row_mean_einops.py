"""Mean of each row, written with einops as KernelBench's Mamba2 files write their reshapes (referee tests: a
candidate may import what the reference imports; what its forward computes with it is still the library's)."""
import torch
import torch.nn as nn
from einops import reduce

batch_size = 8
dim = 512
VARIANTS = {"small": {"batch_size": 4, "dim": 256}, "odd": {"batch_size": 3, "dim": 300}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return reduce(x, "b d -> b", "mean")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
