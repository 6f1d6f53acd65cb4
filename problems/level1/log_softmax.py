"""Log-softmax over an LLM vocabulary (4096 tokens x 32000): memory-bound row reduction, 500 MiB each way, needs a stable log-sum-exp."""
import torch
import torch.nn as nn

batch_size = 4096
vocab_size = 32000

# Rows stay vocabulary-long (several blocks) so the looped / online log-sum-exp is exercised.
VARIANTS = {
    "small": {"batch_size": 4, "vocab_size": 8192},
    "odd": {"batch_size": 3, "vocab_size": 9973},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, vocab_size) * 4.0]


def get_init_inputs():
    return []
