"""CHEAT (softmax_rows), #15: calls the library's softmax as torch.__dict__['softmax']. Expected: static
(reach: __dict__); with the static check skipped: library (aten._softmax observed)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.__dict__["softmax"](x, 1)
