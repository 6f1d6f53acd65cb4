"""Grouped-query SDPA (enable_gqa: 6 query heads share 2 k/v heads), causal, small (tests/test_codegen_attention.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 6
kv_heads = 2
seq = 40
dim = 64

VARIANTS = {"small": {"batch": 1, "heads": 4, "kv_heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 1, "heads": 3, "kv_heads": 1, "seq": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def get_inputs():
    return [torch.randn(batch, heads, seq, dim), torch.randn(batch, kv_heads, seq, dim),
            torch.randn(batch, kv_heads, seq, dim)]


def get_init_inputs():
    return []
