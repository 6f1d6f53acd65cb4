"""forward(x, mask=None) with get_inputs() giving x alone (KernelBench's NetVLAD files): the trace ran with the
default, so the kernels compute that branch and forward() keeps the parameter, checked to stay None."""
import torch
import torch.nn as nn

batch_size = 4
features = 24


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))

    def forward(self, x, mask=None):
        y = torch.relu(x * self.scale)
        if mask is not None:
            y = y * mask
        return y


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
