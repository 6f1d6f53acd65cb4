"""Rotary position embedding, split-halves (Llama / GPT-NeoX) on q of 4 x 32 heads x 4096 x 128, cos/sin tables as buffers: memory-bound, 256 MiB each way."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 32
seq_len = 4096
head_dim = 128
rope_theta = 10000.0

# head_dim must stay even (the two halves are rotated against each other); seq_len goes odd.
VARIANTS = {
    "small": {"batch_size": 2, "num_heads": 4, "seq_len": 32, "head_dim": 64},
    "odd": {"batch_size": 1, "num_heads": 3, "seq_len": 45, "head_dim": 32},
}


class Model(nn.Module):
    def __init__(self, seq_len: int, head_dim: int, rope_theta: float):
        super().__init__()
        inv_freq = 1.0 / (rope_theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        freqs = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)  # (seq_len, head_dim)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * self.cos + rotated * self.sin


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim)]


def get_init_inputs():
    return [seq_len, head_dim, rope_theta]
