import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.TransformerDecoderLayer(64, 4, 128, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.l(x, x)


def get_inputs():
    return [torch.randn(batch, 16, 64)]


def get_init_inputs():
    return []
