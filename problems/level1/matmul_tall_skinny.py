"""Tall-skinny matmul (32768 x 4096) @ (4096 x 64), a LoRA down-projection: memory-bound on reading A (512 MiB) with only 17 GFLOP."""
import torch
import torch.nn as nn

m = 32768
k = 4096
n = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
