"""k14 (pointwise) of llama3_2_1b_decode, module (top) + model.layers.0.self_attn: 6.3% of the model's eager time, floor 55.9 us, eager 117.9 us (predicted (h200, baseline model v1)). Written by `kerntailor profile`; inputs are random, with the real shapes."""
import torch
from torch import device  # noqa: F401  (the cut graph may name a device)

inf = float("inf")
nan = float("nan")
dim0 = 32
dim1 = 4096
dim2 = 64
dim3 = 512


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, past_values, c_lifted_tensor_1, mm_2):
        select_1 = torch.ops.aten.select.int(past_values, 0, 0)
        cat_1 = torch.ops.aten.cat.default([c_lifted_tensor_1, select_1], -2);  c_lifted_tensor_1 = select_1 = None
        sym_size_int = torch.ops.aten.sym_size.int(mm_2, 0)
        sym_size_int_1 = torch.ops.aten.sym_size.int(mm_2, 1)
        view_7 = torch.ops.aten.view.default(mm_2, [sym_size_int, 1, sym_size_int_1]);  mm_2 = sym_size_int = sym_size_int_1 = None
        sym_size_int_2 = torch.ops.aten.sym_size.int(past_values, 1)
        sym_size_int_3 = torch.ops.aten.sym_size.int(past_values, 4);  past_values = None
        view_8 = torch.ops.aten.view.default(view_7, [sym_size_int_2, 1, -1, sym_size_int_3]);  view_7 = sym_size_int_2 = sym_size_int_3 = None
        permute_5 = torch.ops.aten.permute.default(view_8, [0, 2, 1, 3]);  view_8 = None
        cat_12 = torch.ops.aten.cat.default([cat_1, permute_5], -2);  cat_1 = permute_5 = None
        return cat_12


def get_inputs():
    return [torch.randn((4, dim0, 8, dim1, dim2), dtype=torch.bfloat16), torch.randn((0,), dtype=torch.bfloat16), torch.randn((dim0, dim3), dtype=torch.bfloat16)]


def get_init_inputs():
    return []
