"""A random reference (referee tests): dropout applied in training mode inside forward, whatever the module's
mode. No tolerance can judge a kernel against it: the referee refuses it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
dim = 64
VARIANTS = {"small": {"batch_size": 4, "dim": 32}, "odd": {"batch_size": 3, "dim": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(torch.relu(x), p=0.5, training=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
