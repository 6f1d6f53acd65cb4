"""ReLU then an nn.Dropout(0.5) layer (referee tests), the model put in eval mode by its constructor: a model runs
in the mode it is built in, and in eval mode dropout is the identity, so the reference is deterministic and a
ReLU kernel is correct. Built without eval() (KernelBench's level 2 #66 and #83), the same layer is random:
dropout_train.py."""
import torch
import torch.nn as nn

batch_size = 8
dim = 64
VARIANTS = {"small": {"batch_size": 4, "dim": 32}, "odd": {"batch_size": 3, "dim": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.5)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(torch.relu(x))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
