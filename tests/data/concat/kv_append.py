"""A KV-cache append along the sequence axis (past_len + 1 rows: a sum of sizes), then GQA's repeat_kv (expand + reshape) and a scale; the new cache is a model output and is also read after the cat."""
import torch
import torch.nn as nn

batch = 2
kv_heads = 3
groups = 2
past_len = 12
head_dim = 16

VARIANTS = {
    "small": {"batch": 1, "kv_heads": 2, "groups": 2, "past_len": 5, "head_dim": 8},
    "odd": {"batch": 3, "kv_heads": 5, "groups": 2, "past_len": 7, "head_dim": 8},
}


class Model(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, past, new):
        keys = torch.cat([past, new], dim=2)                  # (B, kvh, past_len + 1, d)
        b, h, t, d = keys.shape
        expanded = keys[:, :, None, :, :].expand(b, h, self.groups, t, d).reshape(b, h * self.groups, t, d)
        return keys, expanded * 2.0


def get_inputs():
    return [torch.randn(batch, kv_heads, past_len, head_dim), torch.randn(batch, kv_heads, 1, head_dim)]


def get_init_inputs():
    return [groups]
