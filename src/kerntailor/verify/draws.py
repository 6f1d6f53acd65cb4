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

The "special" draw (SPECIAL; the judge runs it once, on the smallest variant: see judge.py) is the normal draw
with 1 in 64 elements replaced by an IEEE special value, each kind equally likely, within the tensor's domain,
and each kind at least once per tensor (at seeded places, as many kinds as the tensor has elements):

| domain   | special values                                                                |
|----------|-------------------------------------------------------------------------------|
| real     | NaN, +Inf, -Inf, +0, -0, ±huge, ±tiny                                         |
| nonneg   | NaN, +Inf, +0, -0, huge, tiny                                                 |
| unit     | NaN, +0, -0, 1, tiny (no Inf or huge: outside [0, 1])                         |

huge = max^0.4 and tiny = smallest normal^0.4 of the tensor's dtype (fp32: 2.6e15 and 6.7e-16; bf16: 2.6e15 and
6.7e-16; fp16: 84 and 2.1e-2): far from 1, yet a product of two is still finite and normal. At max^0.8 (fp32
1.6e30) two huge factors overflow to ±Inf in fp32, and whether a dot product that also holds an Inf input then
gives +Inf or NaN depends on the library's order of operations and on whether it rounds each product before
adding (problems/level1/matmul_square on this draw, CPU, 2026-12-01: PyTorch's fp32 matmul gave +Inf at 3
places where the interpreter's numpy product gave NaN; the float64 reference, with no overflow, +Inf): that
is rounding order, not NaN propagation. Subnormals are left out too (a GPU may flush them to zero).

Structure tensors (masks, labels, indices) and integer tensors keep their values: a special value there would
change what the problem means, not test how a kernel propagates it. A problem whose floating inputs are all
structure (or that has none) gets the special draw all the same: it then judges the problem's own values at
another seed, and says nothing about NaN.
"""

from __future__ import annotations

from typing import Any

import torch

DISTRIBUTIONS = ("normal", "uniform", "outliers")
SPECIAL = "special"
SPECIAL_RATE = 1 / 64
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
    # in place where the values stay bitwise the same: a draw of a default shape is several GB of fp32 a
    # temporary (measure/memory.py: DRAW_TEMP_BYTES an element, z, pick, mag and one sign at the peak)
    if dist == "uniform":
        return torch.rand(shape, generator=gen, device=device).mul_(2).sub_(1)
    z = torch.randn(shape, generator=gen, device=device)
    if dist == "outliers":
        pick = torch.rand(shape, generator=gen, device=device) < OUTLIER_RATE
        mag = torch.rand(shape, generator=gen, device=device)
        torch.pow(high / OUTLIER_LOW, mag, out=mag)
        mag.mul_(OUTLIER_LOW).mul_(torch.sign(z))
        z = torch.where(pick, mag, z, out=mag)
    return z


def special_values(dtype: torch.dtype, domain: str) -> tuple[float, ...]:
    """The special values one tensor of `dtype` and `domain` ("real", "nonneg", "unit") may receive."""
    info = torch.finfo(dtype)
    huge, tiny = float(info.max) ** 0.4, float(info.tiny) ** 0.4
    nan, inf = float("nan"), float("inf")
    if domain == "unit":
        return nan, 0.0, -0.0, 1.0, tiny
    if domain == "nonneg":
        return nan, inf, 0.0, -0.0, huge, tiny
    return nan, inf, -inf, 0.0, -0.0, huge, -huge, tiny, -tiny


def _with_specials(t: torch.Tensor, domain: str, gen: torch.Generator) -> torch.Tensor:
    """`t` with SPECIAL_RATE of its elements (seeded) replaced by special values of its dtype and domain; in
    place (the caller's own fresh draw): a float64 copy and int64 temporaries of a default shape were 41 bytes
    an element at once (measure/memory.py). The same values as a float64 where() rounded to t's dtype: a kept
    element's round trip is exact, a special value is rounded once either way."""
    values = torch.tensor(special_values(t.dtype, domain), dtype=torch.float64, device=t.device)
    pick = torch.rand(t.shape, generator=gen, device=t.device) < SPECIAL_RATE
    kind = torch.randint(0, values.numel(), t.shape, generator=gen, device=t.device)
    # every kind at least once, at seeded places (as many as fit): at the rate alone a small tensor often
    # holds no NaN at all (185 elements, 9 kinds: P(no NaN) = 0.72), and a NaN-dropping kernel passes
    n = t.numel()
    if n:
        at = torch.randperm(n, generator=gen, device=t.device)[:values.numel()].clone()   # not the whole perm
        pick, kind = pick.reshape(-1), kind.reshape(-1)   # fresh: views, written in place
        pick[at] = True
        kind[at] = torch.arange(at.numel(), device=t.device)
        pick, kind = pick.reshape(t.shape), kind.reshape(t.shape)
    t[pick] = values[kind[pick]].to(t.dtype)
    return t


def _redraw(t: torch.Tensor, dist: str, gen: torch.Generator) -> torch.Tensor:
    if _is_structure(t):
        return t
    domain = _domain(t)
    if dist == SPECIAL:
        out = torch.empty_like(t)   # the problem's strides
        out.copy_(_with_specials(_redraw(t, "normal", gen), domain, gen))
        return out
    high = OUTLIER_HIGH_FP16 if t.dtype == torch.float16 else OUTLIER_HIGH
    z = _raw(dist, tuple(t.shape), gen, t.device, high)
    if domain == "nonneg":   # in place (z is this draw's own): the same values, no second fp32 copy
        z = z.abs_() if dist != "uniform" else z.add_(1)
    elif domain == "unit":
        z = z.add_(1).div_(2) if dist == "uniform" else z.sigmoid_()
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
