"""Square matmul 4096 x 4096 x 4096: compute-bound (137 GFLOP against 192 MiB of traffic); the tensor-core GEMM baseline."""
import torch
import torch.nn as nn

n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []
