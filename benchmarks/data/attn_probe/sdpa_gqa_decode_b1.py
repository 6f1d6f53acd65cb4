"""A Llama decode step's attention as SDPA: batch 1, 32 query heads sharing 8 KV heads (GQA), one new token against a
KV cache of 4096, head dim 128 (flash-decoding: codegen/attention_split.py; benchmarks/attn_probe.py, gpu_calls/decode_call.sh)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1
num_heads = 32
kv_heads = 8
context_len = 4096
head_dim = 128

VARIANTS = {
    "small": {"batch_size": 2, "num_heads": 4, "kv_heads": 2, "context_len": 77, "head_dim": 64},
    "odd": {"batch_size": 3, "num_heads": 6, "kv_heads": 3, "context_len": 301, "head_dim": 32},
}


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k_cache, v_cache, enable_gqa=True)


def get_inputs():
    return [torch.randn(batch_size, num_heads, 1, head_dim),
            torch.randn(batch_size, kv_heads, context_len, head_dim),
            torch.randn(batch_size, kv_heads, context_len, head_dim)]


def get_init_inputs():
    return []
