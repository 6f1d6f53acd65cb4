"""Grouped-query SDPA (4 query heads share 2 k/v heads) with a boolean mask, over keys and values appended to an
empty cache as transformers' DynamicCache does (`torch.cat([torch.tensor([]), k], dim=-2)`), small
(tests/test_hf_models.py). Each row keeps key 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 4
kv_heads = 2
q_len = 24
kv_len = 40
dim = 32

VARIANTS = {"small": {"batch": 1, "heads": 4, "kv_heads": 2, "q_len": 8, "kv_len": 16, "dim": 16},
            "odd": {"batch": 1, "heads": 6, "kv_heads": 3, "q_len": 13, "kv_len": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        empty = torch.tensor([], dtype=k.dtype, device=k.device)
        k, v = torch.cat([empty, k], dim=-2), torch.cat([empty, v], dim=-2)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)


def get_inputs():
    mask = torch.rand(q_len, kv_len) > 0.3
    mask[:, 0] = True
    return [torch.randn(batch, heads, q_len, dim), torch.randn(batch, kv_heads, kv_len, dim),
            torch.randn(batch, kv_heads, kv_len, dim), mask]


def get_init_inputs():
    return []
