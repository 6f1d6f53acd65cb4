"""Adaptive average pooling to a size that does not divide the input's (torchvision's AdaptiveAvgPool2d((7, 7)) on a
map that is not a multiple of 7): windows of two lengths, floor(i·H/h) to ceil((i+1)·H/h). torch's decomposition
unrolls the longest window, whose length follows the map's size: the map's sizes are literals here, which the
variants keep (they move the batch); `avg_uneven_moving.py` moves them."""

import torch
import torch.nn as nn

batch_size = 64
channels = 8


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.pool = nn.AdaptiveAvgPool2d((7, 5))

    def forward(self, x):
        return torch.relu(self.pool(x))


def get_inputs():
    return [torch.randn(batch_size, channels, 30, 26)]


def get_init_inputs():
    return []
