"""The roofline floor: no correct kernel runs much faster than max(flops / rate, min_bytes / bandwidth).

`floor_of` is a captured problem's floor on a target (its matrix FLOPs at the matrix rate, the rest at the
vector rate, its compulsory bytes at the bandwidth): from the targets table's peaks, or ceilings measured on the
machine. On the machine itself, two floors for two questions:

- `roofline_floor_s` uses the ceilings *measured* on this machine (ceilings.py): the honest yardstick for
  "how close to the limit is this kernel" (reported as time / floor; 1.0 is the limit).
- `physics_floor_s` is the referee's "faster than physics" line. A measured ceiling can be beaten a little (a
  Triton copy can edge out torch's), so this one uses the target's datasheet peaks when the targets table knows
  the GPU, else the measured ceilings with generous slack (x1.25 bandwidth, x1.5 matmul rate). For fp32 matrix
  work it uses the fastest rate an accurate fp32 method could use (tf32 units, as 3xTF32 does). A kernel under
  this line is reading less than its inputs, skipping work, or timed wrongly: a bug, not a win.
"""

from __future__ import annotations

from kerntailor.precision import is_fp8
from kerntailor.targets import Floor, Target, roofline_floor

BANDWIDTH_SLACK = 1.25
RATE_SLACK = 1.5


def floor_of(capture, target: Target, ceilings=None, precision: str = "ieee") -> Floor:
    """The roofline floor of a captured problem (a capture.Capture): matrix work on the matrix units (at the fp8
    rate under the fp8 policies: the bytes stay the problem's), the rest on vectors."""
    cost = capture.cost
    if cost.matrix:
        return roofline_floor(target, flops=cost.flops_matrix, vector_flops=cost.flops_vector,
                              min_bytes=cost.min_bytes, dtype="fp8" if is_fp8(precision) else cost.dtype,
                              matrix=True, ceilings=ceilings)
    return roofline_floor(target, flops=cost.flops_vector, min_bytes=cost.min_bytes, dtype=cost.dtype,
                          matrix=False, ceilings=ceilings)


def _rate_name(dtype: str, tf32: bool, precision: str = "ieee") -> str:
    if precision in ("fp8-row", "fp8-tensor"):   # every product runs on the fp8 units (precision.py)
        return "fp8"
    if dtype == "fp32" and tf32:
        return "tf32"
    return dtype if dtype in ("fp32", "tf32", "bf16", "fp16") else "fp32"


def roofline_floor_s(cost, ceilings, tf32: bool = False, precision: str = "ieee") -> float:
    """max(flops / measured rate, min_bytes / measured copy bandwidth), in seconds.

    Matrix FLOPs use the library matmul rate of the dtype (tf32 for fp32 under the tf32 policy); other FLOPs
    use the fp32 matmul rate (close to the CUDA-core fp32 peak on NVIDIA; an approximation). Under the
    tf32x3 policy an fp32 product is three tf32 products (hi·lo + lo·hi + hi·hi): its floor is a third of
    the tf32 rate, the least time that method can take (not the ieee rate, which it does not use). Under
    the fp8 policies products run at the measured fp8 rate; the bytes stay the problem's (its inputs are
    read in their own dtype before anything is quantized).
    """
    flops, min_bytes, dtype, matrix = cost
    rate = ceilings.matmul(_rate_name(dtype, tf32 or precision == "tf32x3", precision) if matrix else "fp32")
    if matrix and dtype == "fp32" and precision == "tf32x3" and rate:
        rate /= 3
    compute = flops / rate if flops and rate else 0.0
    memory = min_bytes / ceilings.copy_bandwidth if ceilings.copy_bandwidth else 0.0
    return max(compute, memory)


def local_target(device_name: str):
    """The targets table's entry for this GPU, or None (the table is optional here)."""
    try:
        from kerntailor.targets import detect_local_target
    except ImportError:
        return None
    try:
        target = detect_local_target()
    except Exception:
        return None
    return target


def physics_floor_s(cost, ceilings, target=None, precision: str = "ieee") -> tuple[float, str]:
    """(seconds, source): the line under which a measured time is "suspect: faster than physics"."""
    flops, min_bytes, dtype, matrix = cost
    if matrix and _rate_name(dtype, False, precision) == "fp8":
        dtype = "fp8"
    if target is not None and getattr(target, "memory_bandwidth", 0):
        names = ("fp32", "tf32") if dtype == "fp32" else (dtype,)
        rate = max([target.peak(n, matrix=True) for n in names] + [target.peak(n, matrix=False) for n in names])
        bandwidth = target.memory_bandwidth
        source = f"datasheet ({target.display_name})"
    else:
        names = ("fp32", "tf32") if dtype == "fp32" else (dtype,)
        rate = max(ceilings.matmul(n) for n in names) * RATE_SLACK
        bandwidth = ceilings.copy_bandwidth * BANDWIDTH_SLACK
        source = f"measured ceilings x{BANDWIDTH_SLACK} bandwidth, x{RATE_SLACK} rate"
    compute = flops / rate if flops and rate else 0.0
    memory = min_bytes / bandwidth if bandwidth else 0.0
    return max(compute, memory), source
