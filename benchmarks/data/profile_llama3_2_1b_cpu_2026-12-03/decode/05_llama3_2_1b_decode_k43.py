"""k43 (pointwise) of llama3_2_1b_decode, module (top) + model.layers.2.self_attn: 6.3% of the model's eager time, floor 55.9 us, eager 117.9 us (predicted (h200, baseline model v1)). Written by `kerntailor profile`; inputs are random, with the real shapes."""
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

    def forward(self, past_keys, c_lifted_tensor_4, add_17):
        select_4 = torch.ops.aten.select.int(past_keys, 0, 2);  past_keys = None
        cat_4 = torch.ops.aten.cat.default([c_lifted_tensor_4, select_4], -2);  c_lifted_tensor_4 = select_4 = None
        cat_19 = torch.ops.aten.cat.default([cat_4, add_17], -2);  cat_4 = add_17 = None
        return cat_19


def get_inputs():
    return [torch.randn((4, dim0, 8, dim1, dim2), dtype=torch.bfloat16), torch.randn((0,), dtype=torch.bfloat16), torch.randn((dim0, 8, 1, dim2), dtype=torch.bfloat16)]


def get_init_inputs():
    return []
