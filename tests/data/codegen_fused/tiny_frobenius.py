"""x divided by the Frobenius norm of all of x (KernelBench's FrobeniusNorm at a tiny size): one row, reduced
whole, with a full-size output, so split rows (splitrows.py) and not the whole-tensor split (split.py)."""
import torch
import torch.nn as nn

a, b, c = 3, 5, 77


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.rand(a, b, c)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"a": 2, "b": 3, "c": 64}, "odd": {"a": 1, "b": 7, "c": 131}}
