"""Bias add then tanh-GELU on an MLP activation (8192 tokens x 14336, Megatron's fused bias-GELU): memory-bound, 448 MiB each way."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 8192
intermediate_size = 14336


class Model(nn.Module):
    def __init__(self, intermediate_size: int):
        super().__init__()
        self.bias = nn.Parameter(0.1 * torch.randn(intermediate_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x + self.bias, approximate="tanh")


def get_inputs():
    return [torch.randn(num_tokens, intermediate_size)]


def get_init_inputs():
    return [intermediate_size]
