"""Self-attention's Q, K and V projections: three nn.Linear on one (B, T, D) input, heads by view + transpose, SDPA
(causal). The three products share their left operand (x as B*T rows) and go separate ways (each an operand of the
attention): the planner makes them one horizontal GEMM kernel (plan/horizontal.py), x read once, the three outputs
stored for the attention as before."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 24
dim = 64
heads = 4

VARIANTS = {"small": {"batch": 1, "seq": 16, "dim": 32},   # heads stays 4: not an input size
            "odd": {"batch": 1, "seq": 21, "dim": 96}}


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)   # (B, H, T, hd)
        k = self.k_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, heads]
