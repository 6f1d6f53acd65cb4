"""Residual add then LayerNorm (post-LN transformer, 16384 tokens x 4096): memory-bound, two 256 MiB reads and one write; fusing saves the sum's round trip."""
import torch
import torch.nn as nn

num_tokens = 16384
hidden_size = 4096


class Model(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size, eps=1e-5)
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.ln(x + residual)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size), torch.randn(num_tokens, hidden_size)]


def get_init_inputs():
    return [hidden_size]
