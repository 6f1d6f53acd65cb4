"""logsumexp over few long rows (tests: split rows with (max, sum of exp) partials)."""
import torch
import torch.nn as nn

rows = 4
dim = 3000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x * 4.0, dim=1)


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return []


VARIANTS = {"small": {"rows": 2, "dim": 1024}, "odd": {"rows": 3, "dim": 2017}}
