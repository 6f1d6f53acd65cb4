"""SDPA with a boolean mask (True: attend) broadcast over batch and heads, (Lq, Lk) with Lq != Lk, small
(tests/test_codegen_attention.py). Each row keeps key 0, and the last row masks everything else."""
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
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    mask = torch.rand(q_len, kv_len) > 0.3
    mask[:, 0] = True
    return [torch.randn(batch, heads, q_len, dim), torch.randn(batch, heads, kv_len, dim),
            torch.randn(batch, heads, kv_len, dim), mask]


def get_init_inputs():
    return []
