"""Pointwise chain x * scale + bias, tanh, clamp (8192 x 16384, per-column bias): memory-bound, 512 MiB each way unfused x3; one pass when fused."""
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384


class Model(nn.Module):
    def __init__(self, dim: int, scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.bias = nn.Parameter(0.1 * torch.randn(dim))
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(x * self.scale + self.bias)
        return torch.clamp(y, self.clamp_min, self.clamp_max)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, 1.5, -0.8, 0.9]
