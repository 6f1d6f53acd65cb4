"""Products over an axis (issue #14: codegen had no writer for torch.prod, so generate took the library path): a
product over the last axis with an epilogue, one over a strided axis kept, and a raw product that the referee's
special values (NaN, inf, 0) run through. Per-step factors near 1, as a model's survival probabilities are, keep
long products in range."""
import torch
import torch.nn as nn

batch = 6
channels = 40
length = 29


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        survive = 1.0 + 0.05 * torch.tanh(x)                # (B, C, L)
        p = torch.prod(survive, dim=-1)                      # the last axis: (B, C)
        q = torch.prod(survive, dim=1, keepdim=True)         # a strided axis, kept: (B, 1, L)
        r = torch.prod(x, dim=-1)                            # NaN, inf and 0 propagate
        return p * torch.sigmoid(p), q, r


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 2, "channels": 16, "length": 8}, "odd": {"batch": 3, "channels": 37, "length": 11}}
