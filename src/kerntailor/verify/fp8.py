"""The fp8 reference: every aten matrix product of a forward computed with fp8-quantized operands.

    with fp8_products(per_row=True, fmt=FP8_FORMATS["e4m3fn"]) as mode:
        ref = model64(*inputs64)          # mm/bmm/addmm/baddbmm/mv/addmv/dot quantized as precision.py says
    mode.unquantized                      # fused matrix ops seen that it could not quantize (for a note)

A TorchDispatchMode sees the aten ops under the composite ones, so torch.matmul, F.linear, `@`, einsum and
nn.Linear arrive here as mm / bmm / addmm / mv. For each product, A (reduced along its last axis) and B (along
its second to last) go through `precision.quantize_along_k`; the result is (q_a @ q_b) * s_a * s_b in float64
(exact terms: only accumulation order separates it from a right fp32-accumulating kernel), then the epilogue
of the op (beta * bias + alpha * product) in float64, rounded once to the dtype the op would have produced.
A vector operand is a K x 1 (or 1 x K) matrix. Integer and complex products, and empty ones, run unchanged.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kerntailor.precision import Fp8Format, quantize_along_k

_aten = torch.ops.aten
_QUANTIZABLE = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

# fused ops that contain matrix products this mode does not quantize: the referee notes them
_UNQUANTIZED_PREFIXES = ("_scaled_dot_product", "convolution", "_convolution", "_addmm_activation", "addbmm",
                         "_int_mm", "_scaled_mm", "mkldnn_", "cudnn_convolution", "miopen_convolution")


def quantized_product(a: torch.Tensor, b: torch.Tensor, per_row: bool, fmt: Fp8Format) -> torch.Tensor:
    """float64 (..., M, K) @ (..., K, N) with both operands put through fp8 along K (batch dims as given:
    one scale per row / column of each batch element under `per_row`, one per whole operand otherwise)."""
    q_a, s_a = quantize_along_k(a, -1, per_row, fmt)
    q_b, s_b = quantize_along_k(b, -2, per_row, fmt)
    return torch.matmul(q_a, q_b) * (s_a * s_b)


def _floating(*ts: Any) -> bool:
    return all(isinstance(t, torch.Tensor) and t.dtype in _QUANTIZABLE for t in ts)


def _epilogue(bias: torch.Tensor, prod: torch.Tensor, beta: Any, alpha: Any) -> torch.Tensor:
    """beta * bias + alpha * prod in float64 (beta 0: the bias is ignored, NaN included, as aten does)."""
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return out
    bias64 = bias.to(torch.float64)
    return out + (bias64 if beta == 1 else bias64 * beta)


class Fp8Products(TorchDispatchMode):
    """See the module docstring. `quantized` counts the products it replaced, by op name."""

    def __init__(self, per_row: bool, fmt: Fp8Format):
        super().__init__()
        self.per_row, self.fmt = per_row, fmt
        self.quantized: dict[str, int] = {}
        self.unquantized: set[str] = set()

    def _prod(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return quantized_product(a, b, self.per_row, self.fmt)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = self._product(func, args, kwargs)
        if out is NotImplemented:
            name = func.__name__ if hasattr(func, "__name__") else str(func)
            if name.startswith(_UNQUANTIZED_PREFIXES):
                self.unquantized.add(str(func))
            return func(*args, **kwargs)
        self.quantized[str(func)] = self.quantized.get(str(func), 0) + 1
        return out

    def _product(self, func, args, kwargs):
        """The quantized result of a product op, or NotImplemented (not a product, or one left as it is)."""
        beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
        if func in (_aten.mm.default, _aten.bmm.default):
            a, b = args[0], args[1]
            if not self._takes(a, b):
                return NotImplemented
            return self._prod(a, b).to(a.dtype)
        if func in (_aten.addmm.default, _aten.baddbmm.default):
            bias, a, b = args[0], args[1], args[2]
            if not self._takes(a, b) or not isinstance(bias, torch.Tensor):
                return NotImplemented
            return _epilogue(bias, self._prod(a, b), beta, alpha).to(a.dtype)
        if func is _aten.mv.default:
            a, v = args[0], args[1]
            if not self._takes(a, v):
                return NotImplemented
            return self._prod(a, v.unsqueeze(-1)).squeeze(-1).to(a.dtype)
        if func is _aten.addmv.default:
            bias, a, v = args[0], args[1], args[2]
            if not self._takes(a, v) or not isinstance(bias, torch.Tensor):
                return NotImplemented
            return _epilogue(bias, self._prod(a, v.unsqueeze(-1)).squeeze(-1), beta, alpha).to(a.dtype)
        if func is _aten.dot.default:
            u, v = args[0], args[1]
            if not self._takes(u, v):
                return NotImplemented
            return self._prod(u.unsqueeze(0), v.unsqueeze(-1)).reshape(()).to(u.dtype)
        return NotImplemented

    @staticmethod
    def _takes(a: Any, b: Any) -> bool:
        return _floating(a, b) and a.numel() > 0 and b.numel() > 0


def fp8_products(per_row: bool, fmt: Fp8Format) -> Fp8Products:
    """A context manager (TorchDispatchMode): inside it, matrix products compute with fp8-quantized operands
    (per row of A and column of B when `per_row`, else per operand), in `fmt`. See the module docstring."""
    return Fp8Products(per_row, fmt)
