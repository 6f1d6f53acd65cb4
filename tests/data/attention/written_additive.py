"""Attention written out with an additive bias per head, query and key (scores * 0.3 + bias, softmax, @ v),
small (tests/test_codegen_attention.py)."""
import torch
import torch.nn as nn

batch = 2
heads = 3
seq = 40
dim = 64

VARIANTS = {"small": {"batch": 1, "heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 1, "heads": 3, "seq": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        scores = q @ k.transpose(-2, -1) * 0.3 + bias
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)] + [torch.randn(1, heads, seq, seq)]


def get_init_inputs():
    return []
