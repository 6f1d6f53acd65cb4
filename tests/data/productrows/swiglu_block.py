"""The second half of a Llama decoder layer on (B, T, D) activations, as transformers writes it: a residual add
after the attention's output projection, RMSNorm, the SwiGLU MLP (gate and up projections, silu(gate) * up, down
projection) and the residual add again. Every linear layer is a 2-d product of (B*T, D) whose readers see it
reshaped to 3-d."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 48
hidden = 64
inter = 160


class Model(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.norm_weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x, attn):
        h = x + self.o_proj(attn)
        normed = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm_weight
        return h + self.down_proj(F.silu(self.gate_proj(normed)) * self.up_proj(normed))


def get_inputs():
    return [torch.randn(batch, seq, hidden), torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden, inter]
