"""ConvTranspose3d 3x3x3, stride 2, padding 1 (4 -> 8 channels) then BatchNorm3d: KernelBench's level-2 pattern
of a strided 3-d transposed convolution whose output lines are short (width 9 -> 17 outputs, 9 per phase), so the
phase form's rows (one line of one phase each, codegen/conv_phases.py) are few next to a GEMM's usual 128."""
import torch
import torch.nn as nn

batch_size = 2
depth = 3
height = 4
width = 9


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(4, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm3d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, 4, depth, height, width)]


def get_init_inputs():
    return []
