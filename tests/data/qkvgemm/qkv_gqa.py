"""Grouped-query attention's projections: q has 4 heads, k and v 2 (their products are half as wide: N differs), with
biases (each product's own epilogue), SDPA over the repeated k/v heads. One horizontal GEMM kernel of three products
of different widths (plan/horizontal.py), each adding its bias in its own branch. The head size is the model's own
(not dim // heads, which the referee's edge cases shrink to 0: the attention's host scale d ** -0.5 then raises
ZeroDivisionError where PyTorch returns an empty result; an attention matter, not the GEMM's)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 20
dim = 64
heads = 4
kv_heads = 2
head_dim = 16

VARIANTS = {"small": {"batch": 1, "seq": 16, "dim": 32},
            "odd": {"batch": 1, "seq": 13, "dim": 96}}


class Model(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, head_dim: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.q_proj = nn.Linear(dim, heads * self.head_dim)
        self.k_proj = nn.Linear(dim, kv_heads * self.head_dim)
        self.v_proj = nn.Linear(dim, kv_heads * self.head_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)      # (B, Hq, T, hd)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)   # (B, Hkv, T, hd)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, heads, kv_heads, head_dim]
