"""Softplus (beta=1, threshold=20) on 4096 x 32768: memory-bound; the threshold branch must be matched exactly."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
