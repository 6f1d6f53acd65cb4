"""ReLU over rows of a width that no variant changes (48), so that the kernels take it as a literal and the
module must refuse another width (tests/test_codegen_guards.py)."""
import torch
import torch.nn as nn

batch_size = 64
width = 48

VARIANTS = {"small": {"batch_size": 8}, "odd": {"batch_size": 5}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, width)]


def get_init_inputs():
    return []
