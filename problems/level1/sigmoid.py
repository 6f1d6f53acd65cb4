"""Sigmoid on 4096 x 65536: memory-bound, one exp per element; 1 GiB in, 1 GiB out at fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
