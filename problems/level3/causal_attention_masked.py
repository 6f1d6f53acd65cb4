"""Causal attention written out (q @ k^T * scale, masked_fill of triu, softmax, @ v), 4 x 32 heads x 2048 x 128: compute-bound (275 GFLOP); unfused it writes 2 GiB of scores."""
import math

import torch
import torch.nn as nn

batch_size = 4
num_heads = 32
seq_len = 2048
head_dim = 128

# head_dim stays a power of two (flash-attention tiles); seq_len goes odd.
VARIANTS = {
    "small": {"batch_size": 1, "num_heads": 2, "seq_len": 128, "head_dim": 64},
    "odd": {"batch_size": 1, "num_heads": 3, "seq_len": 77, "head_dim": 32},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
