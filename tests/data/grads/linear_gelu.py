"""Float32 Linear + bias + GELU (a GEMM with its epilogue), for gradients (the GEMM writer takes no fp64)."""
import torch
import torch.nn as nn

batch = 6
in_features = 10
out_features = 12


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
