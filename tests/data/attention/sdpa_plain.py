"""SDPA over (B, H, L, D), not causal, small: the attention writer's plain path (tests/test_codegen_attention.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 3
seq = 40
dim = 64

VARIANTS = {"small": {"batch": 1, "heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 1, "heads": 3, "seq": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)]


def get_init_inputs():
    return []
