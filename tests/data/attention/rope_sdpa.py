"""Rotary-embedded causal self-attention (a Llama layer's attention without its norms): q, k, v projections of
(B, T, D), heads by view + transpose, RoPE on q and k (cos/sin buffers, rotate_half by a cat of the halves),
SDPA with is_causal, output projection; small (tests/test_attention_prologue.py). The RoPE chains on q and k are
the attention's prologues (plan/fusion.py): computed where the attention loads q and k, never written."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 37
hidden = 256
heads = 2
max_seq = 64

VARIANTS = {"small": {"batch": 1, "seq": 16, "hidden": 64},   # heads stays 2: not an input size
            "odd": {"batch": 1, "seq": 21, "hidden": 96}}


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(nn.Module):
    def __init__(self, hidden: int, heads: int, max_seq: int):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        freqs = torch.outer(torch.arange(max_seq, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)   # (B, H, T, hd)
        k = self.k_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:t], self.sin[:t]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, t, h))


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden, heads, max_seq]
