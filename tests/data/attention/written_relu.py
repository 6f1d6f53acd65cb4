"""Causal self-attention with relu weights instead of a softmax, written out as a GPT block writes it (one QKV
projection split into heads, q @ kᵀ * scale, masked_fill of a registered tril buffer, relu, @ v, heads merged back),
small (tests/test_codegen_attention.py): one Attention node with score "relu" reading the heads as views."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 24
n_embd = 48
n_head = 3
max_seq = 64

VARIANTS = {"small": {"batch": 1, "seq": 16}, "odd": {"batch": 3, "seq": 21}}


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_seq):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(max_seq, max_seq)).view(1, 1, max_seq, max_seq))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.relu(att)
        y = att @ v
        return y.transpose(1, 2).contiguous().view(B, T, C)


def get_inputs():
    return [torch.randn(batch, seq, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seq]
