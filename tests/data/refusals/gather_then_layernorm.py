"""A gather along each of two axes of a (B, H, W, C) map (Swin's reverse shift as torch decomposes torch.roll:
index_select by (arange + s) % n), flattened to (B, H*W, C) tokens and layer-normed (KernelBench
level3/30_SwinTransformerV2's post-norm residual): the gathers are in the map's space, the norm's rows are the
tokens'. Codegen refused the group naming no member ('an indirect load in a group that reshapes its space'), so
generate made a kernel of every member: one per op of the norm. (torch.roll is now captured as slices.)"""
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
        x = x.index_select(1, (torch.arange(h, device=x.device) + h - 2) % h)    # torch.roll by 2 along H
        x = x.index_select(2, (torch.arange(w, device=x.device) + 1) % w)        # and by -1 along W
        return shortcut + self.norm(x.view(b, h * w, c))   # SwinV2's post-norm residual


def get_inputs():
    return [torch.randn(batch, height, width, channels), torch.randn(batch, height * width, channels)]


def get_init_inputs():
    return [channels]
