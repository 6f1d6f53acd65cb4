"""Training-mode BatchNorm2d over a concatenation of 24 pieces along the channels (DenseNet's dense layer in small:
KernelBench level-3 15_DenseNet121 normalizes the concatenation of up to 32 earlier outputs). The statistics are a
reduction over axes (0, 2, 3) whose every element is one of 24 masked loads: at the 64 x 64 default tile that spilled
12.8 KB on sm_90 (triton 3.6.0, cross-compiled, 2026-12-04)."""
import torch
import torch.nn as nn

batch_size = 2
pieces = 24
growth = 2
height = 8
width = 9


class Model(nn.Module):
    def __init__(self, pieces: int, growth: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(pieces * growth)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.1)
            self.bn.bias.normal_(0.0, 0.1)

    def forward(self, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13,
                x14, x15, x16, x17, x18, x19, x20, x21, x22, x23):   # 24 pieces (codegen takes no *args)
        return self.bn(torch.cat([x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17,
                                  x18, x19, x20, x21, x22, x23], dim=1))


def get_inputs():
    return [torch.randn(batch_size, growth, height, width) * 2.0 + 0.5 for _ in range(pieces)]


def get_init_inputs():
    return [pieces, growth]


VARIANTS = {"small": {"batch_size": 1, "height": 8, "width": 9},
            "odd": {"batch_size": 3, "height": 7, "width": 5}}
