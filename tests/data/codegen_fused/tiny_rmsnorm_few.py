"""RMSNorm over few long rows (tests: split rows with sum-of-squares partials, then the normalising pass)."""
import torch
import torch.nn as nn

rows = 4
dim = 2500


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim) * 0.1 + 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]


VARIANTS = {"small": {"rows": 2, "dim": 1024}, "odd": {"rows": 3, "dim": 1999}}
