"""SDPA with queries and keys of different lengths (cross attention; decode at q_len = 1), causal (top-left aligned: row i sees keys j <= i), small
(tests/test_codegen_attention.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 3
q_len = 24
kv_len = 40
dim = 64

VARIANTS = {"small": {"batch": 1, "heads": 2, "q_len": 8, "kv_len": 16, "dim": 32},
            "odd": {"batch": 1, "heads": 3, "q_len": 13, "kv_len": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch, heads, q_len, dim), torch.randn(batch, heads, kv_len, dim),
            torch.randn(batch, heads, kv_len, dim)]


def get_init_inputs():
    return []
