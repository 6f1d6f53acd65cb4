"""k0 (reduction) of llama3_2_1b_decode, module model.embed_tokens + model.layers.0.input_layernorm: 6.9% of the model's eager time, floor 0.1 us, eager 137.0 us (predicted (h200, baseline model v1)). Written by `kerntailor profile`; inputs are random, with the real shapes."""
import torch
from torch import device  # noqa: F401  (the cut graph may name a device)

inf = float("inf")
nan = float("nan")
dim0 = 128256
dim1 = 2048
dim2 = 32


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p_model_embed_tokens_weight, input_ids, p_model_layers_0_input_layernorm_weight):
        embedding = torch.ops.aten.embedding.default(p_model_embed_tokens_weight, input_ids);  p_model_embed_tokens_weight = input_ids = None
        _to_copy_4 = torch.ops.aten._to_copy.default(embedding, dtype = torch.float32)
        pow_1 = torch.ops.aten.pow.Tensor_Scalar(_to_copy_4, 2)
        mean = torch.ops.aten.mean.dim(pow_1, [-1], True);  pow_1 = None
        add_3 = torch.ops.aten.add.Tensor(mean, 1e-05);  mean = None
        rsqrt = torch.ops.aten.rsqrt.default(add_3);  add_3 = None
        mul_3 = torch.ops.aten.mul.Tensor(_to_copy_4, rsqrt);  _to_copy_4 = rsqrt = None
        _to_copy_5 = torch.ops.aten._to_copy.default(mul_3, dtype = torch.bfloat16)
        mul_4 = torch.ops.aten.mul.Tensor(p_model_layers_0_input_layernorm_weight, _to_copy_5);  p_model_layers_0_input_layernorm_weight = _to_copy_5 = None
        return (embedding, mul_3, mul_4)


def get_inputs():
    return [torch.randn((dim0, dim1), dtype=torch.bfloat16), torch.randint(0, 2, (dim2, 1), dtype=torch.int64), torch.randn((dim1,), dtype=torch.bfloat16)]


def get_init_inputs():
    return []
