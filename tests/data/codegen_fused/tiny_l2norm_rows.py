"""Each row divided by its L2 norm, x / sqrt(sum x^2) (tests: windowed split rows, KernelBench 39_L2Norm_'s shape
of computation on a few short rows)."""
import torch
import torch.nn as nn

batch_size = 10
dim = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sqrt(torch.sum(x * x, dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch_size": 4, "dim": 128}, "odd": {"batch_size": 3, "dim": 203}}
