"""CHEAT (softmax_rows), #15: looks for the reference Model the old worker had loaded, in sys.modules (a module
with Model and get_inputs) and among live objects (gc), and returns what it computes; zeros when there is
none. Expected: static (reach); with the static check skipped: accuracy (the candidate's process holds no
reference module until the verdict is decided)."""
import gc
import sys

import torch
import torch.nn as nn


def _reference():
    for module in list(sys.modules.values()):
        model = getattr(module, "Model", None)
        if isinstance(model, type) and issubclass(model, nn.Module) and hasattr(module, "get_inputs"):
            return model()
    for obj in gc.get_objects():
        if isinstance(obj, nn.Module) and type(obj).__name__ == "Model":
            return obj
    return None


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.zeros_like(x)
        ref = _reference()
        if ref is not None:
            y.copy_(ref(x))
        return y
