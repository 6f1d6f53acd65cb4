"""Grouped-query SDPA at a decode step (enable_gqa: 8 query heads share 4 k/v heads, a few queries against a cache of
keys; the tests run it at one query too), small (tests/test_attention_split.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 8
kv_heads = 4
q_len = 3
kv_len = 77
dim = 64

VARIANTS = {"small": {"batch": 3, "heads": 4, "kv_heads": 2, "q_len": 5, "kv_len": 40, "dim": 32},
            "odd": {"batch": 1, "heads": 6, "kv_heads": 3, "q_len": 2, "kv_len": 53, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def get_inputs():
    return [torch.randn(batch, heads, q_len, dim), torch.randn(batch, kv_heads, kv_len, dim),
            torch.randn(batch, kv_heads, kv_len, dim)]


def get_init_inputs():
    return []
