"""MinGPT's CausalSelfAttention without dropout: one projection split into q, k, v, heads by view + transpose,
attention written out with a tril buffer, heads merged back, output projection; small
(tests/test_codegen_attention.py). The attention reads q, k and v as views of the projection (no copies)."""
import math

import torch
import torch.nn as nn

batch = 2
seq = 37
n_embd = 64
n_head = 4
block = 64

VARIANTS = {"small": {"batch": 1, "seq": 16, "n_embd": 32},   # n_head stays 4: not an input size
            "odd": {"batch": 1, "seq": 21, "n_embd": 48}}


class Model(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block: int):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)   # (B, H, T, hd)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


def get_inputs():
    return [torch.randn(batch, seq, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, block]
