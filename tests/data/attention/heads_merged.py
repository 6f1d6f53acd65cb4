"""Causal attention written out (masked_fill of a triu mask that capture proves causal, softmax) whose (B, H, T, D)
output is only copied to other layouts: a GPT block's heads side by side, `y.transpose(1, 2).contiguous().view(B, T,
C)`, and the time-major (T, B, C) of `permute(2, 0, 1, 3).reshape(T, B, C)`; small (tests/test_codegen_attention.py).
The attention group stores O at both copies' strides (plan/fusion.py's layout stores): no copy kernel, the
(B, H, T, D) buffer never written."""
import math

import torch
import torch.nn as nn

batch = 2
heads = 3
seq = 37
dim = 32

VARIANTS = {"small": {"batch": 1, "heads": 2, "seq": 16, "dim": 32},
            "odd": {"batch": 3, "heads": 3, "seq": 21, "dim": 32}}   # one head dim: fewer size arguments


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, H, T, D = q.size()
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1),
                              float("-inf"))
        y = torch.softmax(att, dim=-1) @ v                                    # (B, H, T, D)
        merged = y.transpose(1, 2).contiguous().view(B, T, H * D)             # (B, T, C)
        by_time = y.permute(2, 0, 1, 3).reshape(T, B, H * D)                  # (T, B, C)
        return merged, by_time


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)]


def get_init_inputs():
    return []
