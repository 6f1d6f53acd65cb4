"""torch.export on meta tensors, decomposed to core ATen plus the few composites we lower ourselves."""

from __future__ import annotations

import warnings

import torch

from kerntailor.errors import CaptureError
from kerntailor.problem.meta import recurrent_by_shape

aten = torch.ops.aten

# Composites torch would otherwise keep or decompose badly: turned into ATen pointwise + reductions.
_DECOMPOSE = [aten._softmax, aten._log_softmax, aten.gelu, aten.mish, aten.hardswish, aten.hardsigmoid,
              aten.silu, aten.leaky_relu, aten.elu, aten.softplus, aten.hardtanh, aten.nll_loss_forward,
              aten.mse_loss, aten.huber_loss, aten.smooth_l1_loss, aten.logsumexp,
              aten.l1_loss, aten.binary_cross_entropy, aten.binary_cross_entropy_with_logits]

# Kept whole: lowered by kerntailor (norms into reductions; attention and recurrent layers as anchors: a
# recurrent op would otherwise be unrolled into one cell per time step and layer, see problem/meta.py).
# addmm/baddbmm are not in _DECOMPOSE because torch's decomposition upcasts bf16 operands to fp32 before
# the product.
_KEEP = ("scaled_dot_product", "layer_norm", "group_norm", "batch_norm", "aten.var.", "aten.var_mean.",
         "aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input")


def decomposition_table() -> dict:
    from torch._decomp import get_decompositions

    table = torch.export.default_decompositions()
    table.update(get_decompositions(_DECOMPOSE))
    for key in list(table):
        if any(k in str(key) for k in _KEEP):
            del table[key]
    return table


def _buffers_for_mutated_constants(model: torch.nn.Module) -> None:
    """Register plain tensor attributes as (non-persistent) buffers, in place.

    torch.export refuses a forward that writes a tensor attribute that is not a buffer ("Constant hidden is
    mutated", a hidden state kept as `self.hidden`); as a buffer, the write becomes a buffer mutation, whose
    new value the graph computes and capture ignores (only forward()'s return values are outputs)."""
    for module in model.modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter) \
                    and not name.startswith("_"):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)


def export_on_meta(model: torch.nn.Module, inputs: list, name: str) -> torch.export.ExportedProgram:
    """Trace `model(*inputs)` (meta tensors) to a core-ATen ExportedProgram."""
    try:
        return _export(model, inputs)
    except Exception as e:  # torch.export raises many types; the user needs one line
        if "is mutated in the forward method" in str(e):
            _buffers_for_mutated_constants(model)
            try:
                return _export(model, inputs)
            except Exception as again:
                e = again
        first = (str(e).strip().splitlines() or [""])[0][:300]
        raise CaptureError(f"{name}: torch.export could not trace the model ({type(e).__name__}: {first})") from None


class _ConcreteScalars(torch.overrides.TorchFunctionMode):
    """`torch.tensor(0.5)` built inside forward() stays a real (CPU) 0-d tensor under the meta device, so torch.export
    lifts it with its value and capture can fold it (lower.py): on meta its value would be lost. A CPU scalar tensor
    mixes with tensors of any device, as a Python number does."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in (torch.tensor, torch.as_tensor, torch.scalar_tensor) and args \
                and type(args[0]) in (bool, int, float):
            kwargs["device"] = "cpu"
        return func(*args, **kwargs)


def _export(model: torch.nn.Module, inputs: list) -> torch.export.ExportedProgram:
    with warnings.catch_warnings(), torch.device("meta"), recurrent_by_shape(), _ConcreteScalars():
        warnings.simplefilter("ignore")
        program = torch.export.export(model, tuple(inputs), strict=False)
        return program.run_decompositions(decomposition_table())
