"""The forward convolution that does KernelBench level 1's 57_conv_transposed_2D__square_input__square_kernel's work.

57 is ConvTranspose2d(64, 64, 3), stride 1, no padding, over 8 x 64 x 1024 x 1024: at stride 1 that is a forward
convolution with padding dil·(k - 1) - p = 2 (and the weight's two channel axes swapped, its kernel flipped), so the
same products: output 8 x 64 x 1026 x 1026, K = 64 x 9. benchmarks/gpu_calls/conv_transposed_probe.sh times its
generated kernel beside 57's to tell the transposed form's cost from the shape's.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size - 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
in_channels = 64
out_channels = 64
kernel_size = 3
height = 1024
width = 1024


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
