"""Reductions of reductions over a kept size-1 axis (KernelBench level2/18_Matmul_Sum_Max_AvgPool_LogSumExp's
shape): a row's sum, then its max, min, sum and argmax over the kept axis, each of one element. Codegen refused the
group ('reduces a reduction') and generate cut it before each: a kernel per reduction where one pass does."""
import torch
import torch.nn as nn

batch = 6
channels = 10
length = 37


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        s = torch.sum(torch.tanh(x), dim=-1, keepdim=True)          # (B, C, 1)
        m = torch.amax(s, dim=-1, keepdim=True)                      # over the kept axis: one element a row
        n = torch.amin(m, dim=-1, keepdim=True)                      # a reduction of a reduction
        q = torch.sum(n, dim=-1)                                     # (B, C)
        i = torch.argmax(m, dim=-1)                                  # (B, C), every index 0
        return q * torch.sigmoid(q), i


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
