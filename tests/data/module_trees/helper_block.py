import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN_SCALE = 2


def act(x):
    return F.gelu(x)


class Block(nn.Module):
    def __init__(self, dim):
        super(Block, self).__init__()
        self.fc = nn.Linear(dim, dim * HIDDEN_SCALE)

    def forward(self, x):
        return act(self.fc(x))


class Model(nn.Module):
    """A helper class, a Sequential and a ModuleDict."""
    def __init__(self, dim):
        super(Model, self).__init__()
        self.block = Block(dim)
        self.seq = nn.Sequential(nn.Linear(dim * HIDDEN_SCALE, dim), nn.ReLU())
        self.heads = nn.ModuleDict({"out": nn.Linear(dim, dim), "0": nn.Linear(dim, dim)})

    def forward(self, x, scale):
        y = self.seq(self.block(x))
        return self.heads["out"](y) * scale + self.heads["0"](y)


batch = 16
dim = 32


def get_inputs():
    return [torch.randn(batch, dim), 0.5]


def get_init_inputs():
    return [dim]
