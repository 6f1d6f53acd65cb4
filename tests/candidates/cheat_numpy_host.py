"""CHEAT (softmax_rows), #15: computes the softmax with NumPy on the host (x.cpu().numpy(), then copies the result
into a tensor it allocated), which the static check reads as plumbing. Expected: library (Tensor.numpy()
observed: a read of tensor data on the host)."""
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.cpu().numpy()   # on a GPU, a copy to the host first
        e = np.exp(a - np.max(a, axis=1, keepdims=True))
        y = torch.empty_like(x)
        y.copy_(torch.as_tensor(e / np.sum(e, axis=1, keepdims=True)))
        return y
