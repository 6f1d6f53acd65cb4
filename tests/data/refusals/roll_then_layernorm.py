"""A cyclic shift of a (B, H, W, C) map, flattened to (B, H*W, C) tokens and layer-normed (Swin's reverse shift
and its post-norm residual; KernelBench level3/30_SwinTransformerV2). torch decomposes the roll into a gather along
each axis (a gather of a gather, and gathers in a group whose rows reshape the map: refused, cut into kernels);
capture takes it as the slices of each axis (masked loads at shifted views), and the roll and the norm are one
kernel."""
import torch
import torch.nn as nn

batch = 3
height = 6
width = 5
channels = 24


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor, shortcut: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        x = torch.roll(x, shifts=(2, -1), dims=(1, 2))
        return shortcut + self.norm(x.view(b, h * w, c))   # SwinV2's post-norm residual


def get_inputs():
    return [torch.randn(batch, height, width, channels), torch.randn(batch, height * width, channels)]


def get_init_inputs():
    return [channels]

