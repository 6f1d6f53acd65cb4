"""Argmax over a Llama-3 vocabulary (2048 tokens x 128256, greedy decoding): memory-bound, 1 GiB read, int64 out; ties must pick the first index."""
import torch
import torch.nn as nn

num_tokens = 2048
vocab_size = 128256

# Rows stay vocabulary-long (several blocks) so the cross-block argmax (and its tie rule) is exercised.
VARIANTS = {
    "small": {"num_tokens": 4, "vocab_size": 8192},
    "odd": {"num_tokens": 3, "vocab_size": 9973},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=-1)


def get_inputs():
    return [torch.randn(num_tokens, vocab_size)]


def get_init_inputs():
    return []
