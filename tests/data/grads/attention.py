"""Float32 causal self-attention through SDPA (the attention family), for gradients (the attention writer takes no
fp64): q, k and v are one tensor, so the module has one input as the gradient scripts expect."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 2
seq = 24
head_dim = 16


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(x, x, x, is_causal=True)


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim)]


def get_init_inputs():
    return []
