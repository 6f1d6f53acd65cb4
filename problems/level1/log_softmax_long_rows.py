"""Log-softmax over very long rows (KernelBench level 1 #24 shape): memory-bound, one read and one write; a row
(1.5 MB in fp32) does not fit on chip, so a second pass over it must come from L2 to stay near the floor."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"batch_size": 4, "dim": 8192}, "odd": {"batch_size": 3, "dim": 9973}}
