"""CHEAT (relu_small): never returns (an endless wait in forward). Expected: timeout."""
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            time.sleep(60)
