"""SDPA whose (B, H, L, D) output is copied twice: heads side by side ((B, L, H x D): a layout store of the attention
group) and with the head dim moved ((B, H x D, L): every store would be strided, so the plan keeps that copy a kernel
of its own, which reads the attention's output written as it is); small (tests/test_codegen_attention.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 3
seq = 40
dim = 32

VARIANTS = {"small": {"batch": 1, "heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 3, "heads": 3, "seq": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, H, L, D = q.size()
        y = F.scaled_dot_product_attention(q, k, v)                           # (B, H, L, D)
        return y.transpose(1, 2).reshape(B, L, H * D), y.transpose(-2, -1).reshape(B, H * D, L)


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)]


def get_init_inputs():
    return []
