"""Softmax over rows then a per-column scale, bias and a global factor (8192 x 8192): memory-bound, 256 MiB each way; the chain fuses into the softmax epilogue."""
import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    def __init__(self, dim: int, scaling_factor: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.01 * torch.randn(dim))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = torch.softmax(x, dim=-1)
        return (p * self.weight + self.bias) * self.scaling_factor


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0]


def get_init_inputs():
    return [dim, 4.0]
