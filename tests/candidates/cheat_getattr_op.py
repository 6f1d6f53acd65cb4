"""CHEAT (softmax_rows), #15: calls the library's softmax through getattr(t, 'soft' + 'max') on an alias of
torch, which the static check cannot read. Expected: library (aten._softmax observed at the dispatcher)."""
import torch
import torch.nn as nn

t = torch


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(t, "soft" + "max")(x, 1)
