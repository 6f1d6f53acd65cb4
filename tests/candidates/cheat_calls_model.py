"""CHEAT (softmax_rows): carries a copy of the reference Model and inherits its forward. Expected: static
(uses the reference Model)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


class ModelNew(Model):
    pass
