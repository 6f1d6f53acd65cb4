"""A 2-D transposed convolution alone, small, in float64 (tests: an anchor codegen refuses, nothing else -> the library
path; the conv family takes fp32, bf16 and fp16 operands only, codegen/conv.py: tl.dot takes no fp64)."""
import torch
import torch.nn as nn

batch = 2
channels = 3
size = 12


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(channels, 4, 3, bias=False, dtype=torch.float64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch, channels, size, size, dtype=torch.float64)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 1, "channels": 3, "size": 8},
            "odd": {"batch": 1, "channels": 3, "size": 11}}
