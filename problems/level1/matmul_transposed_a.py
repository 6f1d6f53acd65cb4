"""Matmul with A transposed (A stored 8192 x 4096, computes A.T @ B with B 8192 x 4096): compute-bound (275 GFLOP); A is read column-major."""
import torch
import torch.nn as nn

m = 4096
k = 8192
n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.T, b)


def get_inputs():
    return [torch.randn(k, m), torch.randn(k, n)]


def get_init_inputs():
    return []
