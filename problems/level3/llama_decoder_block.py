"""One Llama decoder layer (RMSNorm, RoPE causal attention, residual, RMSNorm, SwiGLU MLP, residual), hidden 2048 / 16 heads / MLP 5632, 2 x 2048 tokens: compute-bound (~490 GFLOP, 196 MiB of weights)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 2048
hidden_size = 2048
num_heads = 16
intermediate_size = 5632
rope_theta = 10000.0
eps = 1e-6

# hidden_size must stay num_heads * a power-of-two head_dim (32 in both); seq_len goes odd.
VARIANTS = {
    "small": {"batch_size": 1, "seq_len": 16, "hidden_size": 64, "num_heads": 2, "intermediate_size": 160},
    "odd": {"batch_size": 2, "seq_len": 13, "hidden_size": 96, "num_heads": 3, "intermediate_size": 200},
}


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int, intermediate_size: int, max_seq_len: int,
                 rope_theta: float, eps: float):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.input_layernorm = RMSNorm(hidden_size, eps)
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.post_attention_layernorm = RMSNorm(hidden_size, eps)
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        inv_freq = 1.0 / (rope_theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        freqs = torch.outer(torch.arange(max_seq_len, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q = self.q_proj(x).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.input_layernorm(x))
        y = self.post_attention_layernorm(h)
        return h + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size, num_heads, intermediate_size, seq_len, rope_theta, eps]
