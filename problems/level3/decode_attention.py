"""Decode-step attention: one query token per sequence against a KV cache (32 seqs x 32 heads x 4096 ctx x 128): memory-bound on 4 GiB of KV cache, needs split-K (flash-decoding)."""
import math

import torch
import torch.nn as nn

batch_size = 32
num_heads = 32
context_len = 4096
head_dim = 128

# head_dim stays a power of two; context_len stays long enough to span several tiles, and goes odd.
VARIANTS = {
    "small": {"batch_size": 1, "num_heads": 2, "context_len": 256, "head_dim": 64},
    "odd": {"batch_size": 3, "num_heads": 1, "context_len": 331, "head_dim": 32},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k_cache.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        return torch.matmul(torch.softmax(scores, dim=-1), v_cache)


def get_inputs():
    return [torch.randn(batch_size, num_heads, 1, head_dim),
            torch.randn(batch_size, num_heads, context_len, head_dim),
            torch.randn(batch_size, num_heads, context_len, head_dim)]


def get_init_inputs():
    return []
