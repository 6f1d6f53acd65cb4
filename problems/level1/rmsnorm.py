"""RMSNorm written out (x * rsqrt(mean(x^2) + eps) * weight) over 16384 tokens x 4096: memory-bound row reduction, 256 MiB each way."""
import torch
import torch.nn as nn

num_tokens = 16384
hidden_size = 4096
eps = 1e-6


class Model(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


def get_inputs():
    return [torch.randn(num_tokens, hidden_size)]


def get_init_inputs():
    return [hidden_size, eps]
