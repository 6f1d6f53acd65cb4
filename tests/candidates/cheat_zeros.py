"""CHEAT (row_mean): returns zeros. The mean of zero-mean values is near 0, so zeros are close in absolute
terms (|err| ~ 0.04); only a relative test rejects them. Expected: accuracy."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], device=x.device, dtype=x.dtype)
