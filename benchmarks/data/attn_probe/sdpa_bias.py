"""SDPA with an additive bias per head (ALiBi / T5-style relative positions), broadcast over the batch:
4 x 32 heads x 2048 x 128, bias (1, 32, 2048, 2048). PyTorch's flash kernel takes no mask, so eager falls back to
another backend (benchmarks/attn_probe.py records which). Compute-bound (275 GFLOP) plus 1 GiB of bias reads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_heads = 32
seq_len = 2048
head_dim = 128

VARIANTS = {
    "small": {"batch_size": 2, "num_heads": 2, "seq_len": 96, "head_dim": 64},
    "odd": {"batch_size": 1, "num_heads": 3, "seq_len": 53, "head_dim": 32},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape),
            torch.randn(1, num_heads, seq_len, seq_len)]


def get_init_inputs():
    return []
