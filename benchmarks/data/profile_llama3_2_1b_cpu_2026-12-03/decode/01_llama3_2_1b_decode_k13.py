"""k13 (pointwise) of llama3_2_1b_decode, module (top) + model.layers.0.self_attn: 6.3% of the model's eager time, floor 55.9 us, eager 117.9 us (predicted (h200, baseline model v1)). Written by `kerntailor profile`; inputs are random, with the real shapes."""
import torch
from torch import device  # noqa: F401  (the cut graph may name a device)

inf = float("inf")
nan = float("nan")
dim0 = 32
dim1 = 4096
dim2 = 64


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, past_keys, c_lifted_tensor_0, add_5):
        select = torch.ops.aten.select.int(past_keys, 0, 0);  past_keys = None
        cat = torch.ops.aten.cat.default([c_lifted_tensor_0, select], -2);  c_lifted_tensor_0 = select = None
        cat_11 = torch.ops.aten.cat.default([cat, add_5], -2);  cat = add_5 = None
        return cat_11


def get_inputs():
    return [torch.randn((4, dim0, 8, dim1, dim2), dtype=torch.bfloat16), torch.randn((0,), dtype=torch.bfloat16), torch.randn((dim0, 8, 1, dim2), dtype=torch.bfloat16)]


def get_init_inputs():
    return []
