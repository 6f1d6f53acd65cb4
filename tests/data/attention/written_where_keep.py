"""Attention written out with a boolean keep-mask input (torch.where(keep, scores, -inf)) and Lq != Lk, small
(tests/test_codegen_attention.py). A row the mask empties is NaN, as eager softmax gives it."""
import torch
import torch.nn as nn

batch = 2
heads = 3
q_len = 24
kv_len = 40
dim = 64

VARIANTS = {"small": {"batch": 1, "heads": 2, "q_len": 8, "kv_len": 16, "dim": 32},
            "odd": {"batch": 1, "heads": 3, "q_len": 13, "kv_len": 21, "dim": 16}}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) / 8.0
        scores = torch.where(keep, scores, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    keep = torch.rand(q_len, kv_len) > 0.3
    keep[:, 0] = True
    return [torch.randn(batch, heads, q_len, dim), torch.randn(batch, heads, kv_len, dim),
            torch.randn(batch, heads, kv_len, dim), keep]


def get_init_inputs():
    return []
