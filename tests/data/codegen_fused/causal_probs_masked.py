"""Causal attention's probabilities written out and returned (q @ kᵀ * scale, masked_fill of triu, softmax; no
@ v, so no attention group): the softmax rows read the (T, T) mask at row coordinate `xindex % rlen`
(tests/test_codegen_fused.py; problems/level3/causal_attention_masked.py took this path before it became one
attention kernel)."""
import math

import torch
import torch.nn as nn

batch_size = 2
num_heads = 4
seq_len = 256
head_dim = 64

VARIANTS = {
    "small": {"batch_size": 1, "num_heads": 2, "seq_len": 128, "head_dim": 64},
    "odd": {"batch_size": 1, "num_heads": 3, "seq_len": 77, "head_dim": 32},
}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        seq = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=q.device), diagonal=1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
