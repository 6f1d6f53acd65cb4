"""Mean of each row of zero-mean values (referee tests): the answer is close to zero, so an all-zeros
output is close in absolute terms and only a relative test rejects it."""
import torch
import torch.nn as nn

batch_size = 8
dim = 512
VARIANTS = {"small": {"batch_size": 4, "dim": 256}, "odd": {"batch_size": 3, "dim": 300}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
