"""Linear 4096 -> 14336 (with bias) then clamp to [-0.5, 0.5] (constructor arguments): compute-bound GEMM (481 GFLOP), clamp epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 14336


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, clamp_min: float, clamp_max: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.linear(x), self.clamp_min, self.clamp_max)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, -0.5, 0.5]
