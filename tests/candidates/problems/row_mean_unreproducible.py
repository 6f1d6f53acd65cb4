"""Row means whose rounding changes from call to call, as a library kernel that sums with atomics does (cuDNN's
transposed 3-d convolutions; KernelBench level-2 77 on an H100): each call sums the row, offset by 100, in a rotated
order, unless PyTorch's deterministic algorithms are on. The offset makes the large partial sums' rounding show in
the small mean (about 1e-4 relative between two calls, above the fp32 table's 1e-5). The output is still a function
of the input up to rounding: the referee judges it (with a note), it does not refuse it as random."""
import torch
import torch.nn as nn

batch_size = 8
dim = 512
VARIANTS = {"small": {"batch_size": 4, "dim": 256}, "odd": {"batch_size": 3, "dim": 300}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        shift = 0 if torch.are_deterministic_algorithms_enabled() else 37 * self.calls
        return (x + 100.0).roll(shift % x.shape[1], dims=1).sum(dim=1) / x.shape[1] - 100.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
