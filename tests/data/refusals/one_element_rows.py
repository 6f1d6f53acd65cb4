"""A per-row value reading a full-size one where the reduced axis has one element (a mean over a trailing axis of
size 1, then the element itself, as a model written for any window length runs at length 1): every full value is one
value a row, so the row's member reads it there. Codegen refused it ('(per row) reads a full-row value') and
generate cut the group before the reader."""
import torch
import torch.nn as nn

batch = 6
channels = 40


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        t = torch.relu(x) + 0.5 * x                          # (B, C, 1)
        m = t.mean(dim=-1)                                   # (B, C): one element a row
        return m * torch.sigmoid(t[..., 0]), t - t.amax(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(batch, channels, 1)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 2, "channels": 16}, "odd": {"batch": 3, "channels": 37}}
