"""A gather over two axes, then windows of it (Swin's shifted windows as torch decomposed torch.roll over H and W:
index_select by (arange + s) % n along each; a window partition); tests: a gather of a gather is cut into two
kernels, never the library path. (torch.roll itself is now captured as slices: tests/test_codegen_refusals.py.)"""
import torch
import torch.nn as nn

batch = 2
height = 8
width = 8
channels = 6
window = 4


class Model(nn.Module):
    def __init__(self, window):
        super().__init__()
        self.window = window

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        s = self.window // 2
        x = (x * 2.0).index_select(1, (torch.arange(h, device=x.device) + s) % h)
        x = x.index_select(2, (torch.arange(w, device=x.device) + s) % w)
        x = x.view(b, h // self.window, self.window, w // self.window, self.window, c)
        return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, self.window * self.window, c) + 1.0


def get_inputs():
    return [torch.randn(batch, height, width, channels)]


def get_init_inputs():
    return [window]
