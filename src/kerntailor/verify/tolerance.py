"""One tolerance table per dtype, and the comparison of a candidate's output with the float64 reference.

Two tests, both against the reference computed in float64 on inputs and parameters upcast exactly:

    norm:  ‖out − ref‖₂ / ‖ref‖₂                   ≤ norm        (the whole tensor)
    elem:  |out − ref| ≤ atol · rms(ref) + rtol · |ref|         (every element)

`atol` is scaled by the reference's RMS so that one table serves outputs of any magnitude: an element near zero
is judged against the tensor's typical size, not against zero (a cancelled sum has the error of its terms).

Why these numbers (u = unit roundoff of the policy's dtype; "eager" = PyTorch itself in that dtype vs
float64 on the 59 problems of problems/, small variants, CPU, 2026-11-29):

- fp32 (u 6.0e-8): norm 1e-5, rtol = atol 1e-4. About 170 u; eager lands at 2e-8..1e-6 on regular draws
  (4.5e-6 at worst, gemm_softmax on outliers). tf32 operands (7.8e-4) and bf16 ones (2e-3) fail by far.
- tf32 (u 4.9e-4 on matmul operands; the hardware truncates): norm 2e-3, rtol = atol 1e-2. An H200 tf32 GEMM
  (4096^3) measured 7.8e-4 norm and 4.8e-3 at its worst element (outliers draw); a bf16 GEMM (>= 3e-3) fails.
- fp16 (u 4.9e-4): norm 2e-3 (4 u), rtol = atol 1e-2. The output rounding alone gives 0.58 u = 2.8e-4;
  eager lands at 1.5e-4..4.9e-4.
- bf16 (u 3.9e-3): norm 1.6e-2 (4 u), rtol = atol 3e-2 (8 u). One rounding gives 2.3e-3, three about u;
  eager lands at 1.2e-3..3.9e-3 on regular draws.
- fp64: norm 1e-12, rtol = atol 1e-10 (exact inputs, float64 both sides).

A wrong kernel misses by O(1) (zeros: norm error 1.0), so the table separates right from wrong by orders of
magnitude without being loose: bf16 arithmetic inside an fp32 problem (≈2e-3) fails fp32, and so does a tf32
GEMM (≈7e-4) unless the tf32 policy is asked for. The test suite checks that the reference itself, run in its
native dtype, passes its own row (so the table is not tighter than PyTorch).

Never stricter than PyTorch itself: on each draw the reference also runs in its own dtype (strict fp32: no
tf32 in matmul or cuDNN), and where that misses the table (an ill-conditioned draw: outliers of 1000 feeding a
bf16 GEMM then a softmax give PyTorch itself 3e-2) the bounds of that draw widen to EAGER_FACTOR (4) times
PyTorch's own error. A candidate may be as inaccurate as 4x the library, never more; on well-conditioned draws
the table alone rules. Randomness never widens it: a reference whose output changes with the generator state
(dropout in training mode, torch.rand_like in forward) would make PyTorch's "error" O(1), so the judge
refuses such a reference before any comparison (judge.Judge.refuse_random).

NaN never passes (a NaN in the reference means the draw left the problem's domain; the referee redraws).
Inf passes only where the reference, rounded to the output dtype, has the same Inf.

The special-values draw (draws.py: NaN, ±Inf, ±0, huge and tiny inputs) is judged position by position
against special_reference(): PyTorch's own NaN and Inf (the reference run in its own dtype: what "propagates as
PyTorch does" means, an fp32 square that overflows included), the float64 values elsewhere. compare(...,
same_nan=True) then asks for NaN exactly where that reference has NaN (a sum, a matmul or a norm that turns a
row into NaN from one NaN input: the candidate's NaNs must sit on the same positions), the same Inf where it
has Inf, and the usual bounds over the finite rest. Where PyTorch's own dtype and float64 disagree on NaN or
Inf (side_with_float64), a candidate that agrees with float64 there passes too. The finite rest is bounded as on
every draw, widened to 4x PyTorch's own error on it, which huge inputs can make large (CPU, 2026-12-01: with
huge inputs of 1.6e30, an earlier setting of draws.py, problems/level1/groupnorm's ‖Δ‖/‖ref‖ of 0.84 passed,
PyTorch's own fp32 error being at least a quarter of it; at the committed 2.6e15 the worst over problems/ was
1.4e-7): this draw judges where NaN and Inf land; the regular draws judge accuracy, and the verdict's worst
error is theirs.
Integer and bool outputs must match exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from kerntailor.measure.memory import CHUNK_BYTES  # the referee's memory plan budgets the comparison by it
from kerntailor.precision import policy_dtype  # noqa: F401  (the tolerance's dtype: re-exported)


@dataclass(frozen=True)
class Tolerance:
    """The bounds for one dtype policy (see the module docstring for the table and its reasoning)."""

    policy: str   # "fp32", "tf32", "fp16", "bf16", "fp64", "exact"
    norm: float   # bound on ‖out − ref‖ / ‖ref‖
    rtol: float   # elementwise: |out − ref| ≤ atol·rms(ref) + rtol·|ref|
    atol: float   # times rms(ref)


TOLERANCES: dict[str, Tolerance] = {
    "fp64": Tolerance("fp64", norm=1e-12, rtol=1e-10, atol=1e-10),
    "fp32": Tolerance("fp32", norm=1e-5, rtol=1e-4, atol=1e-4),
    "tf32": Tolerance("tf32", norm=2e-3, rtol=1e-2, atol=1e-2),
    "fp16": Tolerance("fp16", norm=2e-3, rtol=1e-2, atol=1e-2),
    "bf16": Tolerance("bf16", norm=1.6e-2, rtol=3e-2, atol=3e-2),
    "exact": Tolerance("exact", norm=0.0, rtol=0.0, atol=0.0),
}

EAGER_FACTOR = 4.0  # a candidate may miss by this times PyTorch's own error on the same draw (never less strict)

# Least precise first: the policy of a computation is that of its least precise floating tensor.
_POLICY_OF = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32", torch.float64: "fp64"}


def tolerance_for(dtype: torch.dtype | None, tf32: bool = False) -> Tolerance:
    """The row of the table for a policy dtype; `tf32` loosens fp32 (and only fp32) to the tf32 row."""
    if dtype is None:
        return TOLERANCES["exact"]
    name = _POLICY_OF.get(dtype)
    if name is None:
        return TOLERANCES["exact"]
    if name == "fp32" and tf32:
        return TOLERANCES["tf32"]
    return TOLERANCES[name]


def relax(tol: Tolerance, eager: Comparison, factor: float = EAGER_FACTOR) -> Tolerance:
    """The bounds for one draw: the table's, widened to `factor` x the error of PyTorch in its own dtype.

    Only a clean eager comparison (finite, no NaN/Inf disagreement) can widen the bounds.
    """
    if eager.problem in ("nan", "inf") or not (eager.rel_norm < float("inf") and eager.max_rel < float("inf")):
        return tol
    norm = max(tol.norm, factor * eager.rel_norm)
    scale = max(1.0, factor * eager.max_rel / tol.rtol) if tol.rtol > 0 else 1.0
    if norm == tol.norm and scale == 1.0:
        return tol
    return Tolerance(f"{tol.policy} widened to {factor:g}x PyTorch's own error", norm, tol.rtol * scale,
                     tol.atol * scale)


@dataclass(frozen=True)
class Comparison:
    """How one output tensor compares with the reference. `problem` names the first failed test."""

    problem: str | None        # None, "nan", "inf", "accuracy"
    detail: str                # one line, empty when problem is None
    rel_norm: float            # ‖out − ref‖ / ‖ref‖ over finite elements
    max_abs: float
    max_rel: float             # max |out − ref| / (|ref| + rms(ref)·atol/rtol): ≤ rtol passes
    where: tuple[int, ...] | None


BLOCK = 1 << 16           # elements per partial sum; the partials are added exactly (math.fsum), so the sums, and
#                           with them every figure compare() reports, do not depend on the chunk size


def chunk_elems(chunk_bytes: int | None = None) -> int:
    """Elements per chunk for a float64 budget of `chunk_bytes` (default CHUNK_BYTES): a multiple of BLOCK."""
    n = (CHUNK_BYTES if chunk_bytes is None else chunk_bytes) // 8
    return max(BLOCK, n // BLOCK * BLOCK)


CHUNK = chunk_elems()


def block_sums(x: torch.Tensor) -> list[float]:
    """Sums of `x` (1-D, starting at a multiple of BLOCK of the whole) over consecutive BLOCK elements: each a
    sum of the same elements in the same call shape however the whole is chunked."""
    if x.numel() == 0:
        return []
    return torch.stack([x[i:i + BLOCK].sum() for i in range(0, x.numel(), BLOCK)]).tolist()


def exact_sum(partials: list[float]) -> float:
    return math.fsum(partials)


def flat_index(flat_idx: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for size in reversed(shape):
        out.append(flat_idx % size if size else 0)
        flat_idx //= size if size else 1
    return tuple(reversed(out))


def ref_chunk(ref: torch.Tensor, s: int, e: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """Elements [s, e) of the flat reference `ref` on `device` as `dtype` (the reference may stay on the host:
    only a chunk comes to the device)."""
    return ref[s:e].to(device=device, dtype=dtype)


def _compare_exact(out: torch.Tensor, ref64: torch.Tensor, chunk: int) -> Comparison:
    shape = tuple(out.shape)
    o_all, r_all = out.detach().reshape(-1), ref64.detach().reshape(-1)
    n_bad, first, first_ref = 0, None, None
    for s in range(0, o_all.numel(), chunk):
        r = ref_chunk(r_all, s, s + chunk, o_all.device, out.dtype)
        bad = o_all[s:s + chunk] != r
        k = int(bad.sum())
        if k and first is None:
            j = int(bad.nonzero()[0, 0])
            first, first_ref = s + j, r[j].item()
        n_bad += k
    if n_bad:
        return Comparison("accuracy", f"{n_bad} of {out.numel()} elements differ from the reference "
                          f"(exact match required for {str(out.dtype).removeprefix('torch.')}); first at "
                          f"{flat_index(first, shape)}: {o_all[first].item()} vs {first_ref}",
                          1.0, float("inf"), float("inf"), flat_index(first, shape))
    return Comparison(None, "", 0.0, 0.0, 0.0, None)


def special_reference(ref64: torch.Tensor, native: torch.Tensor) -> torch.Tensor:
    """The reference of the special-values draw (float64, on ref64's device): the reference in its own dtype
    (`native`) where that is NaN or ±Inf, or where the float64 reference rounded to `native`'s dtype is not
    finite; the float64 reference elsewhere. Integer outputs: ref64 as it is."""
    if not native.is_floating_point() or not ref64.is_floating_point():
        return ref64
    n = native.detach().to(device=ref64.device, dtype=torch.float64)
    keep = torch.isfinite(n) & torch.isfinite(ref64.to(native.dtype))
    return torch.where(keep, ref64.to(torch.float64), n)


def _kind(t: torch.Tensor) -> torch.Tensor:
    """0 NaN, 1 +Inf, 2 -Inf, 3 finite, per element."""
    return torch.where(torch.isnan(t), 0, torch.where(torch.isposinf(t), 1, torch.where(torch.isneginf(t), 2, 3)))


def side_with_float64(ref: torch.Tensor, ref64: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The special draw's reference for one candidate output: `ref` (special_reference), except where PyTorch in
    its own dtype and in float64 disagree on NaN or Inf there and `out` sides with float64 (its value's kind
    is that of the float64 reference rounded to `out`'s dtype): the float64 value. PyTorch disagrees with
    itself there (CPU fp32 gelu(+Inf) is NaN on its vectorized path, +Inf on its scalar one and in float64;
    an fp32 intermediate overflows where float64 does not), so either answer is PyTorch's."""
    if not out.is_floating_point() or not ref.is_floating_point():
        return ref
    r64 = ref64.detach().to(device=ref.device, dtype=torch.float64)
    o = out.detach().to(device=ref.device, dtype=torch.float64)
    kind64 = _kind(r64.to(out.dtype).to(torch.float64))
    take = (_kind(o) == kind64) & (_kind(ref) != kind64)
    return torch.where(take, r64, ref)


def native_specials(native: torch.Tensor, ref64: torch.Tensor, chunk_bytes: int | None = None) -> bool:
    """Whether PyTorch in its own dtype (`native`) gives NaN or Inf anywhere the float64 reference, rounded to that
    dtype, gives another kind of value (chunked, as compare)."""
    if not native.is_floating_point() or not ref64.is_floating_point() or native.shape != ref64.shape:
        return False
    if bool(torch.isfinite(native).all()):   # the usual case: no chunk of the reference moves (it may be the host's)
        return False
    chunk = chunk_elems(chunk_bytes)
    n_all, r_all = native.detach().reshape(-1), ref64.detach().reshape(-1)
    for s in range(0, n_all.numel(), chunk):
        n = n_all[s:s + chunk].to(torch.float64)
        r = ref_chunk(r_all, s, s + chunk, n.device, native.dtype).to(torch.float64)
        kind = _kind(n)
        if bool(((kind != 3) & (kind != _kind(r))).any()):
            return True
    return False


def side_with_native(ref64: torch.Tensor, native: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """A regular draw's reference for one candidate output: the float64 reference, except where PyTorch in its
    own dtype gives NaN or Inf, float64 (rounded to that dtype) does not, and `out` gives the same kind as
    PyTorch: PyTorch's value there. An intermediate under- or overflows in the problem's dtype where float64's
    does not (a cumprod of 10^6 factors below 1 reaches 0 in fp32 after ~2,300 of them, and keep / keep[-1] is
    then 0 / 0 = NaN where float64 gives tiny / 0 = Inf): either answer is PyTorch's. A finite output where
    PyTorch gives NaN or Inf is still judged against float64 (side_with_float64 is the special draw's mirror)."""
    if not out.is_floating_point() or not ref64.is_floating_point() or not native.is_floating_point():
        return ref64
    n = native.detach().to(device=ref64.device, dtype=torch.float64)
    o = out.detach().to(device=ref64.device, dtype=torch.float64)
    kind = _kind(n)
    take = (kind != 3) & (kind != _kind(ref64.to(native.dtype).to(torch.float64))) & (_kind(o) == kind)
    return torch.where(take, n, ref64.to(torch.float64))


def compare(out: torch.Tensor, ref64: torch.Tensor, tol: Tolerance, chunk_bytes: int | None = None,
            same_nan: bool = False) -> Comparison:
    """Compare one candidate output with the float64 reference (same shape; checked by the caller).

    `same_nan` (the special-values draw): `out` must also be NaN wherever the reference is NaN.

    Two passes over flat chunks of `chunk_bytes` float64 bytes (CHUNK_BYTES): NaN/Inf and the norms first
    (the RMS scales atol), then the elementwise bound. The reference may live on another device (the host):
    each chunk is brought to the output's. The result does not depend on the chunk size (BLOCK).
    """
    chunk = chunk_elems(chunk_bytes)
    if not out.is_floating_point():
        return _compare_exact(out, ref64, chunk)
    shape = tuple(out.shape)
    dev = out.device
    o_all, r_all = out.detach().reshape(-1), ref64.detach().reshape(-1)
    n = o_all.numel()
    ref_sq: list[float] = []
    diff_sq: list[float] = []
    n_finite = 0
    for s in range(0, n, chunk):
        o = o_all[s:s + chunk].to(torch.float64)
        r = ref_chunk(r_all, s, s + chunk, dev, torch.float64)
        r_rounded = r.to(out.dtype).to(torch.float64)  # Inf where the output dtype overflows
        nan_o, nan_r = torch.isnan(o), torch.isnan(r)
        new_nan = nan_o & ~nan_r
        if bool(new_nan.any()):
            j = int(new_nan.nonzero()[0, 0])
            i = s + j
            total = sum(int(torch.isnan(o_all[t:t + chunk]).sum()) for t in range(0, n, chunk))
            return Comparison("nan", f"{total} NaN elements, first at {flat_index(i, shape)} "
                              f"where the reference is {r[j].item():.6g}", float("nan"), float("nan"),
                              float("nan"), flat_index(i, shape))
        lost_nan = nan_r & ~nan_o if same_nan else None
        if lost_nan is not None and bool(lost_nan.any()):
            j = int(lost_nan.nonzero()[0, 0])
            i = s + j
            total = sum(int((torch.isnan(ref_chunk(r_all, t, t + chunk, dev, torch.float64))
                             & ~torch.isnan(o_all[t:t + chunk])).sum()) for t in range(0, n, chunk))
            return Comparison("nan", f"{total} elements are not NaN where the reference is NaN, first at "
                              f"{flat_index(i, shape)}: out {o[j].item():.6g}", float("nan"), float("nan"),
                              float("nan"), flat_index(i, shape))
        inf_o, inf_r = torch.isinf(o), torch.isinf(r_rounded)
        inf_bad = (inf_o | inf_r) & ~(inf_o & inf_r & (o == r_rounded))
        if bool(inf_bad.any()):
            j = int(inf_bad.nonzero()[0, 0])
            i = s + j
            return Comparison("inf", f"out and reference disagree on Inf at {flat_index(i, shape)}: out "
                              f"{o[j].item():.6g}, reference {r_rounded[j].item():.6g} "
                              f"({int(inf_bad.sum())}+ such elements)", float("inf"), float("inf"),
                              float("inf"), flat_index(i, shape))
        finite = torch.isfinite(r_rounded) & ~nan_r
        rf = torch.where(finite, r, 0.0)
        ref_sq += block_sums(rf * rf)
        d = torch.where(finite, o - r, 0.0)
        diff_sq += block_sums(d * d)
        n_finite += int(finite.sum())
    ref_norm, diff_norm = exact_sum(ref_sq) ** 0.5, exact_sum(diff_sq) ** 0.5
    if ref_norm > 0:
        rel_norm = diff_norm / ref_norm
    else:
        rel_norm = 0.0 if diff_norm == 0 else float("inf")
    rms = ref_norm / max(n_finite, 1) ** 0.5
    floor = rms * (tol.atol / tol.rtol) if tol.rtol > 0 else rms
    max_abs, max_rel, worst, worst_ref, n_bad = 0.0, 0.0, 0, None, 0
    for s in range(0, n, chunk):
        o = o_all[s:s + chunk].to(torch.float64)
        r = ref_chunk(r_all, s, s + chunk, dev, torch.float64)
        finite = torch.isfinite(r.to(out.dtype).to(torch.float64)) & ~torch.isnan(r)
        absdiff = torch.where(finite, (o - r).abs(), 0.0)
        rabs = torch.where(finite, r.abs(), 0.0)
        n_bad += int((absdiff > tol.atol * rms + tol.rtol * rabs).sum())
        if floor > 0:
            rel = absdiff / (rabs + floor)
        else:
            rel = torch.where(absdiff > 0, float("inf"), 0.0)
        j = int(rel.argmax())
        if s == 0 or float(rel[j]) > max_rel:
            max_rel, worst, worst_ref = float(rel[j]), s + j, r[j].item()
        max_abs = max(max_abs, float(absdiff.max()))
    where = flat_index(worst, shape) if n else None
    worst_text = ""
    if n:
        worst_text = f"worst element at {where}: out {o_all[worst].item():.7g}, reference {worst_ref:.7g}"
    if rel_norm > tol.norm:
        return Comparison("accuracy", f"‖out−ref‖/‖ref‖ = {rel_norm:.3g} > {tol.norm:.3g} ({tol.policy} policy); "
                          f"{worst_text}", rel_norm, max_abs, max_rel, where)
    if n_bad:
        return Comparison("accuracy", f"{n_bad} of {n} elements outside |out−ref| ≤ {tol.atol:.3g}·rms(ref) + "
                          f"{tol.rtol:.3g}·|ref| ({tol.policy} policy); {worst_text}", rel_norm, max_abs, max_rel,
                          where)
    return Comparison(None, "", rel_norm, max_abs, max_rel, where)


def flatten_outputs(value: Any) -> list[Any]:
    """A forward() result as a flat list (a tensor, or tuples/lists of them and of plain numbers)."""
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            out.extend(flatten_outputs(v))
        return out
    return [value]
