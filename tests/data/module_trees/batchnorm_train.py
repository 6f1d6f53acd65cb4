import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench style: built and run without eval(), so BatchNorm normalizes by the batch's statistics;
    a Dropout(p=0.0) in training mode is the identity."""

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        self.drop = nn.Dropout(p=0.0)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.fc(x))))


batch_size = 48
in_features = 40
out_features = 24


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
