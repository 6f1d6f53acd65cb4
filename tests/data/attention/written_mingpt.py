"""Causal self-attention written out as MinGPT does (q @ kᵀ * scale, masked_fill of a tril buffer sliced to the
sequence, softmax, @ v), small (tests/test_codegen_attention.py): one Attention node whose boolean mask is
`bias[:, :, :T, :T] == 0`."""
import math

import torch
import torch.nn as nn

batch = 2
heads = 3
seq = 37
dim = 32
block = 64

VARIANTS = {"small": {"batch": 1, "heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 1, "heads": 3, "seq": 21, "dim": 16}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        t = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        return att @ v


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)]


def get_init_inputs():
    return []
