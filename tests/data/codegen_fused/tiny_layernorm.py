"""LayerNorm with a learned affine over a small hidden size (tests: bf16, persistent vs looped schedules)."""
import torch
import torch.nn as nn

num_tokens = 16
hidden_size = 512


class Model(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size, eps=1e-5)
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size) * 2.0 + 0.5]


def get_init_inputs():
    return [hidden_size]


VARIANTS = {"small": {"num_tokens": 4, "hidden_size": 256}, "odd": {"num_tokens": 3, "hidden_size": 300}}
