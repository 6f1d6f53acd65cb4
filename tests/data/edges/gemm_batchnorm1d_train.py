"""Linear + BatchNorm1d in training mode (as built: KernelBench never calls eval()) + softmax: PyTorch's BatchNorm
raises at one value per channel in training mode, a check an eval-mode run on meta tensors skips (tests: the edge
planner never shrinks the batch to 1 here; problem/load.py's eval_for_shapes)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return torch.softmax(self.bn(self.gemm(x)), dim=1)


batch_size = 256
in_features = 1024
out_features = 512


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
