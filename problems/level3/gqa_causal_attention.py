"""Grouped-query causal attention (32 query heads share 8 kv heads, Llama-3 8B), 4 x 4096 x 128: compute-bound (550 GFLOP); k/v are 4x smaller than q and should be read, not expanded."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_heads = 32
num_kv_heads = 8
seq_len = 4096
head_dim = 128

# num_heads must stay a multiple of num_kv_heads and head_dim a power of two; seq_len goes odd.
VARIANTS = {
    "small": {"batch_size": 1, "num_heads": 4, "num_kv_heads": 2, "seq_len": 64, "head_dim": 64},
    "odd": {"batch_size": 1, "num_heads": 6, "num_kv_heads": 2, "seq_len": 37, "head_dim": 32},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        groups = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim),
            torch.randn(batch_size, num_kv_heads, seq_len, head_dim),
            torch.randn(batch_size, num_kv_heads, seq_len, head_dim)]


def get_init_inputs():
    return []
