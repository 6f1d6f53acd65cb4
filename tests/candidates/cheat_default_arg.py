"""CHEAT (softmax_rows), #15: calls the library's softmax through a default argument (_f=torch.softmax), a
reference the static check does not see as a call. Expected: library (aten._softmax observed)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, _f=torch.softmax) -> torch.Tensor:
        return _f(x, 1)
