"""Causal scaled-dot-product attention, then out * 0.5 + q (a residual), small: SDPA as a library call (captured
as an Attention anchor), the residual tail a generated kernel; the scale 1/sqrt(head_dim) varies by variant."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
num_heads = 2
seq_len = 16
head_dim = 8

VARIANTS = {
    "small": {"batch_size": 1, "num_heads": 2, "seq_len": 8, "head_dim": 4},
    "odd": {"batch_size": 1, "num_heads": 3, "seq_len": 7, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) * 0.5 + q


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
