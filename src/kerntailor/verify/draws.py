"""Fresh seeded input draws for the referee, of more than one distribution, never zeros.

The problem's own `get_inputs()` (run with the draw's seed) gives the shapes, dtypes and strides, the integer
inputs (class targets, indices) and the non-tensor arguments. Every floating tensor is then redrawn from the
draw's distribution, kept in the problem's domain:

| domain of the problem's tensor | normal          | uniform    | outliers                                  |
|--------------------------------|-----------------|------------|-------------------------------------------|
| has negatives                  | N(0, 1)         | U(-1, 1)   | N(0, 1), 1 in 64 elements ±10..1000       |
| non-negative                   | abs N(0, 1)     | U(0, 2)    | abs of the above                          |
| inside [0, 1]                  | sigmoid N(0, 1) | U(0, 1)    | sigmoid of the above (values near 0 and 1)|

Outlier magnitudes are log-uniform in [10, 1000] (fp16 tensors: [10, 100], so that squares stay finite in
fp16): past 88.7, exp() overflows fp32, which is what catches a softmax that forgets to subtract the max.
A floating tensor that is constant or integer-valued (masks, one-hot targets, labels stored as float) is
structure, not data: it keeps the problem's own (seeded) values.
"""

from __future__ import annotations

from typing import Any

import torch

DISTRIBUTIONS = ("normal", "uniform", "outliers")
OUTLIER_RATE = 1 / 64
OUTLIER_LOW, OUTLIER_HIGH, OUTLIER_HIGH_FP16 = 10.0, 1000.0, 100.0


def draw_names(count: int) -> tuple[str, ...]:
    """`count` draw names cycling through the distributions: normal, uniform, outliers, normal#2, ..."""
    names = []
    for i in range(count):
        base = DISTRIBUTIONS[i % len(DISTRIBUTIONS)]
        names.append(base if i < len(DISTRIBUTIONS) else f"{base}#{i // len(DISTRIBUTIONS) + 1}")
    return tuple(names)


def _domain(t: torch.Tensor) -> str:
    lo, hi = float(t.min()), float(t.max())
    if lo >= 0 and hi <= 1:
        return "unit"
    if lo >= 0:
        return "nonneg"
    return "real"


def _is_structure(t: torch.Tensor) -> bool:
    if t.numel() == 0:
        return True
    if bool((t == t.reshape(-1)[0]).all()):
        return True  # constant
    return bool((t == t.round()).all())  # integer-valued: labels, masks, one-hot


def _raw(dist: str, shape: tuple[int, ...], gen: torch.Generator, device: torch.device,
         high: float = OUTLIER_HIGH) -> torch.Tensor:
    if dist == "uniform":
        return torch.rand(shape, generator=gen, device=device) * 2 - 1
    z = torch.randn(shape, generator=gen, device=device)
    if dist == "outliers":
        pick = torch.rand(shape, generator=gen, device=device) < OUTLIER_RATE
        mag = OUTLIER_LOW * (high / OUTLIER_LOW) ** torch.rand(shape, generator=gen, device=device)
        z = torch.where(pick, torch.sign(z) * mag, z)
    return z


def _redraw(t: torch.Tensor, dist: str, gen: torch.Generator) -> torch.Tensor:
    if _is_structure(t):
        return t
    domain = _domain(t)
    high = OUTLIER_HIGH_FP16 if t.dtype == torch.float16 else OUTLIER_HIGH
    z = _raw(dist, tuple(t.shape), gen, t.device, high)
    if domain == "nonneg":
        z = z.abs() if dist != "uniform" else z + 1
    elif domain == "unit":
        z = (z + 1) / 2 if dist == "uniform" else torch.sigmoid(z)
    out = torch.empty_like(t)
    out.copy_(z)
    return out


def draw_inputs(problem, variant, dist: str, seed: int, device: str | torch.device) -> list[Any]:
    """The inputs of one draw: the problem's own get_inputs() at `seed`, floating tensors redrawn from `dist`.

    `dist` "problem" keeps the problem's own values (the fallback when a redraw leaves its domain).
    """
    device = torch.device(device)
    base = problem.make_inputs(variant, device, seed)
    if dist == "problem":
        return base
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    kind = dist.split("#")[0]
    return [_redraw(v, kind, gen) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in base]
