"""Float64 pointwise chain for gradcheck: GELU(tanh) of x * w + b, then a residual."""
import torch
import torch.nn as nn

rows = 6
cols = 10


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.w = nn.Parameter(torch.randn(cols, dtype=torch.float64))
        self.b = nn.Parameter(torch.randn(cols, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.gelu(x * self.w + self.b, approximate="tanh")
        return y + torch.sigmoid(x)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float64)]


def get_init_inputs():
    return [cols]
