"""SiLU (x * sigmoid(x)) on an MLP activation (8192 tokens x 14336): memory-bound, one exp per element."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 14336


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
