"""Scaled dot-product attention on small tensors (tests: attention has no code generator -> library path)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 2
seq = 16
dim = 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 1, "heads": 2, "seq": 8, "dim": 8},
            "odd": {"batch": 1, "heads": 3, "seq": 7, "dim": 8}}
