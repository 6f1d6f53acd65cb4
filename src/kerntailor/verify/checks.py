"""Checks on one (variant, draw) that look at tensors: output structure, aliasing, mutation, poison, determinism.

The numeric comparison with the reference is in tolerance.py. Each function returns None when the check
passes, or a one-line reason when it fails. Large outputs are compared in chunks (a GPU default shape can hold
over a billion elements; float64 temporaries of that size would not fit), and the float64 reference may stay on
the host: a chunk of it at a time comes to the device (tolerance.ref_chunk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kerntailor.verify.poison import GARBAGE_BYTE, NAN_BYTE, poison_value
from kerntailor.verify.tolerance import CHUNK, Tolerance, block_sums, exact_sum, flat_index, ref_chunk


@dataclass(frozen=True)
class OutSpec:
    """What the reference's output looks like (kept instead of the tensor, to free device memory)."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    device: torch.device


def output_specs(values: list[Any], device: Any = None) -> list[Any]:
    """`device`: where the reference's outputs would be had it run where the candidate does (it ran on the host
    only as judge.native_reference's fallback); else each output's own device."""
    return [OutSpec(tuple(v.shape), v.dtype, device or v.device) if isinstance(v, torch.Tensor) else v
            for v in values]


def describe(value: Any) -> str:
    if isinstance(value, (torch.Tensor, OutSpec)):
        return f"tensor{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    return type(value).__name__


def check_structure(outs: list[Any], refs: list[Any]) -> str | None:
    """Same count, kind, shape and dtype of outputs as the reference (run in its own dtype)."""
    if len(outs) != len(refs):
        return f"forward returned {len(outs)} output(s), the reference returns {len(refs)}"
    for i, (o, r) in enumerate(zip(outs, refs)):
        is_tensor = isinstance(r, (torch.Tensor, OutSpec))
        if is_tensor != isinstance(o, torch.Tensor):
            return f"output {i} is {describe(o)}, the reference's is {describe(r)}"
        if is_tensor:
            if tuple(o.shape) != tuple(r.shape):
                return f"output {i} has shape {tuple(o.shape)}, the reference's has {tuple(r.shape)}"
            if o.dtype != r.dtype:
                return f"output {i} has dtype {o.dtype}, the reference's has {r.dtype}"
            if o.device.type != r.device.type:
                return f"output {i} is on {o.device}, the reference's on {r.device}"
    return None


def _storages(values: list[Any]) -> dict[int, int]:
    return {v.untyped_storage().data_ptr(): i for i, v in enumerate(values)
            if isinstance(v, torch.Tensor) and v.numel() > 0}


def aliased(outs: list[Any], inputs: list[Any]) -> tuple[int, int] | None:
    """(output index, input index) of the first output that shares memory with an input."""
    ins = _storages(inputs)
    for i, o in enumerate(outs):
        if isinstance(o, torch.Tensor) and o.numel() > 0 and o.untyped_storage().data_ptr() in ins:
            return i, ins[o.untyped_storage().data_ptr()]
    return None


def changed_inputs(after: list[Any], before: list[Any]) -> int | None:
    """Index of the first tensor input whose bytes differ from the pristine copy."""
    for i, (a, b) in enumerate(zip(after, before)):
        if isinstance(b, torch.Tensor) and not _bitwise_equal(a, b):
            return i
    return None


def _bits(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous().reshape(-1)
    size = t.element_size()
    view_as = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(size)
    if view_as is None or t.is_complex():
        return t.view(torch.uint8) if t.dtype != torch.bool else t.to(torch.uint8)
    return t.view(view_as) if t.dtype != torch.bool else t.to(torch.uint8)


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(_bits(a), _bits(b)))


def unwritten(run1: torch.Tensor, run2: torch.Tensor) -> tuple[int, tuple[int, ...]] | None:
    """Elements holding the NaN poison after run 1 and the garbage poison after run 2: never written.

    Returns (count, index of the first) or None.
    """
    p1 = _bits(poison_value(run1.dtype, NAN_BYTE).reshape(1)).reshape(())
    p2 = _bits(poison_value(run2.dtype, GARBAGE_BYTE).reshape(1)).reshape(())
    b1, b2 = _bits(run1), _bits(run2)
    count, first = 0, None
    for s in range(0, b1.numel(), CHUNK):
        m = (b1[s:s + CHUNK] == p1.to(b1.device)) & (b2[s:s + CHUNK] == p2.to(b2.device))
        n = int(m.sum())
        if n and first is None:
            first = s + int(m.nonzero()[0, 0])
        count += n
    if count == 0:
        return None
    return count, flat_index(first, tuple(run1.shape))


def disagreement(run1: torch.Tensor, run2: torch.Tensor, ref64: torch.Tensor, tol: Tolerance) -> str | None:
    """Two runs on the same inputs must be bitwise equal, or within the tolerance (atomics may reorder sums)."""
    if _bitwise_equal(run1, run2):
        return None
    a, b = run1.reshape(-1), run2.reshape(-1)
    r = ref64.reshape(-1)
    if not run1.is_floating_point():
        bad = sum(int((a[s:s + CHUNK] != b[s:s + CHUNK]).sum()) for s in range(0, a.numel(), CHUNK))
        first = next(s + int((a[s:s + CHUNK] != b[s:s + CHUNK]).nonzero()[0, 0]) for s in range(0, a.numel(), CHUNK)
                     if bool((a[s:s + CHUNK] != b[s:s + CHUNK]).any()))
        at = flat_index(first, tuple(run1.shape))
        return (f"two runs on the same inputs differ in {bad} elements (first at {at}): a race or a read of "
                "unwritten memory")
    sq: list[float] = []
    finite = 0
    for s in range(0, r.numel(), CHUNK):
        rc = ref_chunk(r, s, s + CHUNK, a.device, torch.float64)
        ok = torch.isfinite(rc)
        sq += block_sums(torch.where(ok, rc, 0.0) ** 2)
        finite += int(ok.sum())
    rms = (exact_sum(sq) / max(finite, 1)) ** 0.5
    count, worst, worst_at = 0, 0.0, None
    for s in range(0, a.numel(), CHUNK):
        x, y = a[s:s + CHUNK].to(torch.float64), b[s:s + CHUNK].to(torch.float64)
        rc = ref_chunk(r, s, s + CHUNK, a.device, torch.float64)
        nan_mismatch = torch.isnan(x) != torch.isnan(y)
        d = torch.where(torch.isnan(x) & torch.isnan(y), 0.0, (x - y).abs())
        d = torch.where(torch.isinf(x) & torch.isinf(y) & (x == y), 0.0, d)
        allowed = tol.atol * rms + tol.rtol * torch.nan_to_num(rc.abs(), nan=0.0, posinf=0.0)
        bad = nan_mismatch | ~(d <= allowed)
        n = int(bad.sum())
        if n:
            dd = torch.where(bad, torch.nan_to_num(d, nan=float("inf")), -1.0)
            i = int(dd.argmax())
            if worst_at is None or float(dd[i]) > worst:
                worst, worst_at = float(dd[i]), s + i
        count += n
    if count == 0:
        return None
    return (f"two runs on the same inputs differ in {count} elements beyond the {tol.policy} tolerance (worst at "
            f"{flat_index(worst_at, tuple(run1.shape))}: {a[worst_at].item():.7g} vs {b[worst_at].item():.7g}): "
            "a race or a read of unwritten memory")
