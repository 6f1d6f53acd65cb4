"""Product over the middle axis of 16 x 256 x 256 (KernelBench level1's product reduction, reduction_dim 1): a strided
reduction; Triton has no tl.prod, so the rows reduce with a multiply tl.reduce. 4 MiB read, 16 KiB written."""
import torch
import torch.nn as nn

batch_size = 16
dim1 = 256
dim2 = 256


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]
