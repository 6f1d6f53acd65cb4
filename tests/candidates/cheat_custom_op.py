"""CHEAT (softmax_rows), #17 item 4: shaped like a generated kernel.py, whose launches are one custom op registered
once per process (torch.library.custom_op(name, fn) under a hasattr check, not as a decorator), but the op's
implementation calls the library's softmax instead of launching a kernel. Expected: static (the function handed to
torch.library.custom_op is on the forward path once forward calls torch.ops.<its namespace>); with the static
check skipped, library (the observed check follows the custom op into its Python implementation: aten._softmax)."""
import torch
import torch.nn as nn


def _launch_kernels(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    return torch.softmax(x, dim=1)


def _launch_kernels_fake(x):
    return torch.empty((x.shape[0], x.shape[1]), device=x.device, dtype=x.dtype)


if not hasattr(torch.ops.kerntailor, "softmax_rows_cheat0123456789abcd"):
    torch.library.custom_op("kerntailor::softmax_rows_cheat0123456789abcd", _launch_kernels,
                            mutates_args=()).register_fake(_launch_kernels_fake)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.dim() != 2:
            raise ValueError("x: rank 2")
        return torch.ops.kerntailor.softmax_rows_cheat0123456789abcd(x)
