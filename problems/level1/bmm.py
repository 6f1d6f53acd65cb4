"""Batched matmul (128 x 512 x 1024) @ (128 x 1024 x 2048), KernelBench #3 shape: compute-bound (275 GFLOP, 1.75 GiB traffic)."""
import torch
import torch.nn as nn

batch_size = 128
m = 512
k = 1024
n = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
