"""A pointwise chain over a transposed input: (B, M, N) read as (B, N, M), so the load is contiguous along the
output's next-to-last axis and strided along its last (a permuted read, not a convolution's): the kernel walks
2-D tiles (codegen/fused/writer.py's tile_mode, "tile2d")."""
import torch
import torch.nn as nn

batch_size = 2
rows = 12
cols = 20


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x.transpose(1, 2)) * 2.0


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch_size": 1, "rows": 5, "cols": 9}, "odd": {"batch_size": 3, "rows": 13, "cols": 19}}
