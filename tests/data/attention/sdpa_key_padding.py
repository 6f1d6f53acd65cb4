"""SDPA with a boolean key-padding mask (True: attend), (batch, 1, 1, Lk): broadcast over heads and queries, as
a padded batch gives it, small (tests/test_codegen_attention.py). Each sequence keeps key 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 3
seq = 40
dim = 32

VARIANTS = {"small": {"batch": 2, "heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 3, "heads": 1, "seq": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)


def get_inputs():
    keep = torch.rand(batch, 1, 1, seq) > 0.4
    keep[..., 0] = True
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)] + [keep]


def get_init_inputs():
    return []
