"""SwiGLU MLP on (B, T, D) activations: silu(x @ Wg^T) * (x @ Wu^T), then the down projection. The gate and up
products share their left operand (x as B*T rows): the planner makes them one GEMM kernel with two accumulators
(plan/dual.py), so the up product is never written. Sizes where the default dual schedule takes its largest tiles
(128 rows; fp32: 128 x 64, 16-bit: 128 x 128), for the cross-compile checks, yet small enough for the interpreter."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 128
dim = 256
hidden = 512


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, hidden]
