"""torch.export on meta tensors, decomposed to core ATen plus the few composites we lower ourselves."""

from __future__ import annotations

import warnings

import torch

from kerntailor.errors import CaptureError

aten = torch.ops.aten

# Composites torch would otherwise keep or decompose badly: turned into ATen pointwise + reductions.
_DECOMPOSE = [aten._softmax, aten._log_softmax, aten.gelu, aten.mish, aten.hardswish, aten.hardsigmoid,
              aten.silu, aten.leaky_relu, aten.elu, aten.softplus, aten.hardtanh, aten.nll_loss_forward,
              aten.mse_loss, aten.huber_loss, aten.smooth_l1_loss, aten.logsumexp,
              aten.l1_loss, aten.binary_cross_entropy, aten.binary_cross_entropy_with_logits]

# Kept whole: lowered by kerntailor (norms into reductions; attention as an anchor). addmm/baddbmm are
# not in _DECOMPOSE because torch's decomposition upcasts bf16 operands to fp32 before the product.
_KEEP = ("scaled_dot_product", "layer_norm", "group_norm", "batch_norm", "aten.var.", "aten.var_mean.")


def decomposition_table() -> dict:
    from torch._decomp import get_decompositions

    table = torch.export.default_decompositions()
    table.update(get_decompositions(_DECOMPOSE))
    for key in list(table):
        if any(k in str(key) for k in _KEEP):
            del table[key]
    return table


def export_on_meta(model: torch.nn.Module, inputs: list, name: str) -> torch.export.ExportedProgram:
    """Trace `model(*inputs)` (meta tensors) to a core-ATen ExportedProgram."""
    try:
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            program = torch.export.export(model, tuple(inputs), strict=False)
            return program.run_decompositions(decomposition_table())
    except Exception as e:  # torch.export raises many types; the user needs one line
        first = (str(e).strip().splitlines() or [""])[0][:300]
        raise CaptureError(f"{name}: torch.export could not trace the model ({type(e).__name__}: {first})") from None
