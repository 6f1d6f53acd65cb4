"""y = x @ W^T + b (nn.Linear; referee tests): parameters come from the reference's state_dict."""
import torch
import torch.nn as nn

batch_size = 32
in_features = 64
out_features = 48
VARIANTS = {"small": {"batch_size": 16, "in_features": 32, "out_features": 32},
            "odd": {"batch_size": 13, "in_features": 40, "out_features": 24}}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def FLOPS():
    return 2 * batch_size * in_features * out_features
