"""Llama SwiGLU MLP (gate/up 4096 -> 14336, silu(gate) * up, down 14336 -> 4096) on 4096 tokens: compute-bound (1.44 TFLOP, 672 MiB of weights); gate+up share one read of x."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 4096
hidden_size = 4096
intermediate_size = 14336


class Model(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def get_inputs():
    return [torch.randn(num_tokens, hidden_size)]


def get_init_inputs():
    return [hidden_size, intermediate_size]
