"""ReLU then an nn.Dropout(0.5) layer, built as KernelBench builds models (training mode, no eval()): dropout
draws a random mask, so the reference is random and the referee refuses it in one line."""
import torch
import torch.nn as nn

batch_size = 8
dim = 64
VARIANTS = {"small": {"batch_size": 4, "dim": 32}, "odd": {"batch_size": 3, "dim": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(torch.relu(x))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
