"""LeakyReLU (slope 0.01, a constructor argument) on 4096 x 65536: memory-bound, 1 GiB in and 1 GiB out at fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [0.01]
