"""InstanceNorm2d over x.unsqueeze(1).unsqueeze(1), then a residual add and a product (KernelBench level-2 28's
pattern): captured as BatchNorm statistics of (1, B, 1, F) over axes 0, 2, 3, rows of F contiguous elements."""
import torch
import torch.nn as nn

batch_size = 12
features = 200


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(1)   # one channel: the unsqueezed axis

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = self.norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        return (x + y) * y


def get_inputs():
    return [torch.randn(batch_size, features), torch.randn(batch_size, features)]


def get_init_inputs():
    return []
