"""Matrix-vector product (28672 x 8192) @ (8192 x 1), a decode-step projection: purely memory-bound on the 896 MiB matrix."""
import torch
import torch.nn as nn

m = 28672
k = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, 1)]


def get_init_inputs():
    return []
