"""Mean over a whole 2-D tensor of a term that reads a vector broadcast along its rows (KernelBench's hinge loss
shape: targets of stride (0, 1)); tests: benchmarks/split_sum_probe.py generates its split reduction."""
import torch
import torch.nn as nn

dim0 = 40
dim1 = 24


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    return [torch.randn(dim0, dim1), torch.randn(dim1)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"dim0": 8, "dim1": 40}, "odd": {"dim0": 13, "dim1": 7}}
