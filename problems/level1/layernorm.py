"""LayerNorm over the hidden size (16384 tokens x 4096) with learned affine: memory-bound row reduction, 256 MiB each way."""
import torch
import torch.nn as nn

num_tokens = 16384
hidden_size = 4096


class Model(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size, eps=1e-5)
        with torch.no_grad():  # non-trivial affine so that weight/bias bugs show
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size) * 2.0 + 0.5]


def get_init_inputs():
    return [hidden_size]
