"""Matmul with B transposed (x @ W.T, the nn.Linear layout: 8192 tokens x 4096 @ (14336 x 4096).T): compute-bound (962 GFLOP, 800 MiB traffic)."""
import torch
import torch.nn as nn

m = 8192
k = 4096
n = 14336


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k)]


def get_init_inputs():
    return []
