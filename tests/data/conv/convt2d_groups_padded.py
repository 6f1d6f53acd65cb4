"""ConvTranspose2d 3x2 kernel, stride (2, 1), padding (1, 0), output_padding (1, 0), dilation (1, 2), 2 groups
(6 -> 8 channels, no bias) times 0.5 over (N, C, H, W)."""
import torch
import torch.nn as nn

batch_size = 2
height = 5
width = 7

VARIANTS = {"small": {"batch_size": 1, "height": 4, "width": 5}, "odd": {"batch_size": 1, "height": 7, "width": 6}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(6, 8, (3, 2), stride=(2, 1), padding=(1, 0), output_padding=(1, 0),
                                       dilation=(1, 2), groups=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) * 0.5


def get_inputs():
    return [torch.randn(batch_size, 6, height, width)]


def get_init_inputs():
    return []
