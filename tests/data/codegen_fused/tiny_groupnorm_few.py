"""GroupNorm with few groups over long rows (tests: split rows with Welford partials and per-channel affine)."""
import torch
import torch.nn as nn

batch_size = 2
num_channels = 8
height = 24
width = 20


class Model(nn.Module):
    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, eps=1e-5)
        with torch.no_grad():
            self.gn.weight.normal_(1.0, 0.1)
            self.gn.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, num_channels, height, width)]


def get_init_inputs():
    return [2, num_channels]   # two groups in every variant


VARIANTS = {"small": {"batch_size": 1, "num_channels": 4, "height": 16, "width": 16},
            "odd": {"batch_size": 3, "num_channels": 6, "height": 13, "width": 17}}
