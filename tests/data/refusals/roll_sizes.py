"""torch.roll over two axes of a map whose every size varies between the variants (the referee's small and odd
ones): each axis's slices are read at offsets (n - s)·stride and -s·stride, sizes of the kernel at every size."""
import torch
import torch.nn as nn

batch = 3
height = 6
width = 5
channels = 24


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.roll(torch.tanh(x), shifts=(2, -1), dims=(1, 2)) + 1.0


def get_inputs():
    return [torch.randn(batch, height, width, channels)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 2, "height": 4, "width": 7, "channels": 8},
            "odd": {"batch": 1, "height": 5, "width": 3, "channels": 5}}
