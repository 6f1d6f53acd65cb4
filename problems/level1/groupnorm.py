"""GroupNorm (8 groups over 64 channels) on 16 x 64 x 256 x 256: memory-bound, each group reduces 512K elements; 256 MiB each way."""
import torch
import torch.nn as nn

batch_size = 16
num_channels = 64
num_groups = 8
height = 256
width = 256


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
    return [num_groups, num_channels]
