"""Advanced indexing with several index tensors (transformers' causal mask under torch.export reads
`packed[batch_idx, q_idx]`): adjacent indexed axes (the broadcast shape in their place) and axes apart (the broadcast
shape first), negative indices included; forward reads an index's values only where it is not traced, as
transformers' packed-sequence check does (tests/test_hf_models.py)."""
import torch
import torch.nn as nn

rows = 48
cols = 40
depth = 24
picks = 20

VARIANTS = {"small": {"rows": 16, "cols": 24, "depth": 8, "picks": 8},
            "odd": {"rows": 13, "cols": 21, "depth": 11, "picks": 7}}


def _traced(t: torch.Tensor) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return torch.compiler.is_compiling() or isinstance(t, FakeTensor)


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, r: torch.Tensor, c: torch.Tensor) -> tuple:
        if not _traced(r) and bool((r >= x.shape[0]).any()):   # a value read on meta tensors: refused there
            raise IndexError("row index out of range")
        adjacent = x[r[:, None], c[None, :]] * 2.0               # (picks, picks)
        apart = y[r[:, None] % y.shape[0], :, c[None, :] % y.shape[2]]   # (picks, picks, cols)
        return adjacent, apart


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(depth, cols, depth),
            torch.randint(-rows, rows, (picks,)), torch.randint(-cols, cols, (picks,))]


def get_init_inputs():
    return []
