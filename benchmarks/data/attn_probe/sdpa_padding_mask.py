"""SDPA with a boolean key-padding mask (True: attend), one row of keys per sequence broadcast over heads and
queries, as a padded batch of different lengths gives it: 8 x 32 heads x 2048 x 128, mask (8, 1, 1, 2048). PyTorch's
flash kernel takes no mask, so eager falls back to another backend (benchmarks/attn_probe.py records which)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 32
seq_len = 2048
head_dim = 128

VARIANTS = {
    "small": {"batch_size": 2, "num_heads": 2, "seq_len": 96, "head_dim": 64},
    "odd": {"batch_size": 3, "num_heads": 3, "seq_len": 53, "head_dim": 32},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,))   # every sequence keeps half its keys or more
    keep = (torch.arange(seq_len)[None, :] < lengths[:, None]).view(batch_size, 1, 1, seq_len)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape), keep]


def get_init_inputs():
    return []
