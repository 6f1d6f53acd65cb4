"""k18 (matmul) of llama3_2_1b_prefill, module model.layers.0.mlp.gate_proj: 4.3% of the model's eager time, floor 555.6 us, eager 673.5 us (predicted (h200, baseline model v1)). Written by `kerntailor profile`; inputs are random, with the real shapes."""
import torch
from torch import device  # noqa: F401  (the cut graph may name a device)

inf = float("inf")
nan = float("nan")
dim0 = 8192
dim1 = 2048


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p_model_layers_0_mlp_gate_proj_weight, mul_10):
        permute_8 = torch.ops.aten.permute.default(p_model_layers_0_mlp_gate_proj_weight, [1, 0]);  p_model_layers_0_mlp_gate_proj_weight = None
        sym_size_int = torch.ops.aten.sym_size.int(mul_10, 2)
        view_15 = torch.ops.aten.view.default(mul_10, [-1, sym_size_int]);  mul_10 = sym_size_int = None
        mm_4 = torch.ops.aten.mm.default(view_15, permute_8);  view_15 = permute_8 = None
        return mm_4


def get_inputs():
    return [torch.randn((dim0, dim1), dtype=torch.bfloat16), torch.randn((8, dim1, dim1), dtype=torch.bfloat16)]


def get_init_inputs():
    return []
