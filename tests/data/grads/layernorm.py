"""Float64 LayerNorm with affine parameters, for gradcheck."""
import torch
import torch.nn as nn

rows = 4
hidden = 12


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, dtype=torch.float64)
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(rows, hidden, dtype=torch.float64)]


def get_init_inputs():
    return [hidden]
