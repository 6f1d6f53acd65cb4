import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, *args):
        if len(args) == 1:
            x = args[0]
        a, b, c = (list(args) + [None] * 3)[:3]
        x = args[0]
        idx = t = args[-1]
        return F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=False)


def get_inputs():
    return [torch.randn(batch, 3, 32, 32)]


def get_init_inputs():
    return []
