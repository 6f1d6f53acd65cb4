"""The scores of a decode step, returned (softmax(q @ k_cacheᵀ · scale), no @ v): a batched GEMV (one query row
per sequence and head) and a persistent softmax over 4096 keys, as two kernels (tests/test_codegen_golden.py
keeps these writer paths, which decode_attention took before it became one attention kernel)."""
import math

import torch
import torch.nn as nn

batch_size = 32
num_heads = 32
context_len = 4096
head_dim = 128

VARIANTS = {
    "small": {"batch_size": 1, "num_heads": 2, "context_len": 256, "head_dim": 64},
    "odd": {"batch_size": 3, "num_heads": 1, "context_len": 331, "head_dim": 32},
}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k_cache: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k_cache.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, num_heads, 1, head_dim), torch.randn(batch_size, num_heads, context_len, head_dim)]


def get_init_inputs():
    return []
