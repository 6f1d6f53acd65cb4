"""A scan's epilogue reading the scan's last value along each row (KernelBench level3 48/49_Mamba2's chunk states:
`decay_states = torch.exp(A_cumsum[..., -1:] - A_cumsum)`): codegen refused the read (a view of stride 0 along
the row at its last element) and generate cut the group before the reader. Also a cumulative product after a
prologue, divided by its row's end, and the cumsum itself returned. The steps are negative (Mamba2's A = -exp(.) dt)
whatever the referee draws, so the decays stay in range."""
import torch
import torch.nn as nn

batch = 3
heads = 4
chunks = 2
block_len = 40


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor):
        A_cumsum = torch.cumsum(-torch.sigmoid(A), dim=-1)                    # (B, H, C, L), decreasing
        decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)           # the row's end, broadcast: <= 1
        keep = torch.cumprod(1.0 + 0.1 * torch.tanh(A), dim=-1)              # factors near 1: in range
        share = keep / keep[..., -1:]
        return decay_states, share, A_cumsum


def get_inputs():
    return [-torch.rand(batch, heads, chunks, block_len)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch": 2, "heads": 2, "chunks": 1, "block_len": 16},
            "odd": {"batch": 1, "heads": 3, "chunks": 3, "block_len": 23}}
