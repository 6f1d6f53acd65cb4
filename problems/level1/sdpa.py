"""Non-causal scaled-dot-product attention (8 x 32 heads x 2048 x 128): compute-bound (550 GFLOP); a flash kernel never writes the 2048^2 scores."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
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
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
