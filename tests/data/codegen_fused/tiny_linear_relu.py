"""A small linear layer then ReLU (tests: a matmul is not covered by the fused codegen -> library path)."""
import torch
import torch.nn as nn

batch_size = 16
in_features = 64
out_features = 32


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


VARIANTS = {"small": {"batch_size": 8, "in_features": 32, "out_features": 16},
            "odd": {"batch_size": 5, "in_features": 33, "out_features": 17}}
