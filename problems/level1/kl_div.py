"""KL divergence between two softmax distributions (4096 x 32000, batchmean, KernelBench #98 form): memory-bound, 1 GiB read, scalar out."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
num_classes = 32000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    return [torch.randn(batch_size, num_classes).softmax(dim=-1),
            torch.randn(batch_size, num_classes).softmax(dim=-1)]


def get_init_inputs():
    return []
