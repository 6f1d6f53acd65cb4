"""What a problem must cost at least: FLOPs and the fewest bytes, for the roofline floor.

`problem_cost` asks the capture stage first (FLOPs and compulsory bytes counted on the core-ATen graph). Where
capture cannot trace the problem, it falls back to an estimate:

- min bytes = every input tensor, parameter and buffer read once + every output written once (shapes from a
  forward on the meta device, no real memory); the reads are kept apart (`read_bytes`), since the floor
  charges reads and writes at their own measured rates;
- FLOPs = the problem file's `FLOPS` hint (a number, or a function of no arguments that reads the variant's
  size constants), else 0 (a memory-bound floor);
- matrix = the file's `MATRIX` hint, else whether its source calls a matrix op (matmul, linear, conv, ...);
- dtype = the least precise floating dtype among inputs, parameters and outputs ("fp32", "bf16", ...).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

MATRIX_OPS = re.compile(r"\b(matmul|mm|bmm|baddbmm|addmm|einsum|linear|Linear|conv\w*|Conv\w*|"
                        r"scaled_dot_product_attention|MultiheadAttention)\b|@")


class ProblemCost(NamedTuple):
    flops: float
    min_bytes: int
    dtype: str
    matrix: bool
    read_bytes: int | None = None   # of min_bytes, the reads (the rest are writes); None: not split
    conv_fp32_flops: float = 0.0    # of flops, fp32 convolutions' (cuDNN's TF32 under PyTorch's defaults)


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


def problem_cost(problem, variant: str = "default") -> ProblemCost:
    """(flops, min_bytes, dtype, matrix, read_bytes) of one variant of a loaded ProblemSpec."""
    return cost_with_source(problem, variant)[0]


def cost_with_source(problem, variant: str = "default") -> tuple[ProblemCost, str]:
    """The cost and where it came from: "capture" (the ATen graph) or "estimate" (see the module docstring)."""
    try:
        from kerntailor.capture import capture_problem

        c = capture_problem(problem, variant).cost
        return (ProblemCost(float(c.flops), int(c.min_bytes), str(c.dtype), bool(c.matrix), int(c.min_bytes_read),
                            float(c.flops_conv_fp32)), "capture")
    except Exception:  # capture cannot trace every problem (yet): fall back to the estimate
        return estimate_cost(problem, variant), "estimate"


def estimate_cost(problem, variant: str = "default") -> ProblemCost:
    """Inputs + parameters read once, outputs written once; FLOPs from the file's FLOPS hint."""
    import torch

    from kerntailor.precision import policy_dtype
    from kerntailor.problem.spec import dtype_name

    model = problem.make_model(variant, "meta")
    inputs = problem.make_inputs(variant, "meta")
    with torch.no_grad():
        outputs = _flat(model(*inputs))
    tensors_in = [x for x in inputs if isinstance(x, torch.Tensor)] + list(model.state_dict().values())
    tensors_out = [y for y in outputs if isinstance(y, torch.Tensor)]
    read_bytes = sum(_nbytes(t) for t in tensors_in)
    min_bytes = read_bytes + sum(_nbytes(t) for t in tensors_out)
    module = problem.module(variant)
    hint = getattr(module, "FLOPS", None)
    flops = 0.0
    if callable(hint):
        flops = float(hint())
    elif isinstance(hint, (int, float)) and variant == "default":
        flops = float(hint)  # a number is computed at import, from the default sizes only
    matrix_hint = getattr(module, "MATRIX", None)
    matrix = bool(matrix_hint) if matrix_hint is not None else bool(flops and MATRIX_OPS.search(problem.source))
    dt = policy_dtype([t.dtype for t in tensors_in + tensors_out])
    return ProblemCost(flops, int(min_bytes), dtype_name(dt) if dt is not None else "fp32", matrix, int(read_bytes))
