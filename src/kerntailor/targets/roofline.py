"""The roofline floor: the least time any kernel can take for a given amount of work on a target.

    floor = max(flops / peak_rate(dtype), min_bytes / bandwidth)

`min_bytes` is the compulsory traffic (read every input once, write every output once). Predicted mode
uses the vendor peaks of the Target; measured mode passes `Ceilings` (copy bandwidth and library matmul
rate measured once on the machine) and the Floor says which source bound it.

Worked example (MI300X, 5.3 TB/s): softmax over 4096 x 393216 fp32 reads and writes each element once,
2 x 4096 x 393216 x 4 B = 12.88 GB -> 2431.1 us, memory-bound. An fp16 GEMM 8192^3 is 1.0995 TFLOP ->
841 us at 1307.4 TF, compute-bound (its 402.7 MB of operands take 76 us).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kerntailor.errors import TargetError
from kerntailor.targets.spec import Target

VENDOR = "vendor peak"
MEASURED = "measured"

# torch / numpy / Triton spellings -> the Target's rate keys
_DTYPE_KEYS = {
    "fp64": "fp64", "float64": "fp64", "double": "fp64", "f64": "fp64",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "f32": "fp32",
    "tf32": "tf32", "xf32": "tf32",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "f16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp8": "fp8", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8",
    "float8_e5m2fnuz": "fp8", "fp8e4nv": "fp8", "fp8e5": "fp8", "fp8e4b8": "fp8", "fp8e5b16": "fp8",
}
# where a target has no rate for a dtype, the rate it is computed at instead
_FALLBACK = {"tf32": "fp32", "fp8": "fp16"}


def dtype_key(dtype) -> str:
    """'float32', torch.float32, 'torch.bfloat16', 'fp16' -> the rate key ('fp32', 'bf16', ...)."""
    text = str(dtype).lower().removeprefix("torch.")
    key = _DTYPE_KEYS.get(text)
    if key is None:
        raise TargetError(f"no FLOP rate for dtype {dtype!r}; use one of fp64, fp32, tf32, fp16, bf16, fp8")
    return key


@dataclass(frozen=True)
class Ceilings:
    """Ceilings measured on a machine; any left unset fall back to the Target's vendor peaks."""

    copy_bandwidth: float | None = None                  # bytes/s, device-to-device copy
    matmul_flops: tuple[tuple[str, float], ...] = ()     # library matmul FLOP/s per dtype key
    source: str = MEASURED                               # "measured H200 2026-11-29 torch 2.11"

    def matmul_rate(self, key: str) -> float | None:
        return dict(self.matmul_flops).get(key)


# Measured on an H200 (gpu-facts.md, 2026-11-29, torch 2.11): copy 4.27 TB/s; cuBLAS fp32 51 TF,
# tf32 360 TF, bf16 818 TF at 4096^3 (680 TF at 8192^3; the higher rate gives the lower floor).
H200_MEASURED = Ceilings(copy_bandwidth=4.27e12,
                         matmul_flops=(("fp32", 51e12), ("tf32", 360e12), ("bf16", 818e12)),
                         source="measured H200 2026-11-29 torch 2.11")


@dataclass(frozen=True)
class Floor:
    """The roofline floor of one piece of work on one target, with the ceilings it used."""

    target: str
    dtype: str                  # rate key asked for
    rate_dtype: str             # rate key used (differs where the target lacks one: tf32 -> fp32)
    matrix: bool
    flops: float
    min_bytes: float
    seconds: float
    compute_seconds: float
    memory_seconds: float
    bound: str                  # "memory" | "compute"
    arithmetic_intensity: float  # FLOP per byte of compulsory traffic (inf with no bytes)
    ridge_point: float          # FLOP/byte at which the target turns compute-bound: peak / bandwidth
    peak_flops: float           # FLOP/s used
    bandwidth: float            # bytes/s used
    compute_source: str         # "vendor peak" | "measured"
    memory_source: str          # "vendor peak" | "measured"

    @property
    def microseconds(self) -> float:
        return self.seconds * 1e6

    @property
    def ceiling_source(self) -> str:
        """Source of the ceiling that sets the floor ("vendor peak" or "measured")."""
        return self.memory_source if self.bound == "memory" else self.compute_source

    def summary(self) -> str:
        """'2431.1 us, memory-bound (vendor peak)'."""
        return f"{self.microseconds:.1f} us, {self.bound}-bound ({self.ceiling_source})"


def _rate(target: Target, key: str, matrix: bool, ceilings: Ceilings | None) -> tuple[float, str, str]:
    """(FLOP/s, rate key used, source) for `key`, falling back tf32 -> fp32 and fp8 -> fp16."""
    for k in (key, _FALLBACK.get(key)):
        if k is None:
            continue
        measured = ceilings.matmul_rate(k) if (ceilings and matrix) else None
        if measured:
            return measured, k, MEASURED
        vendor = target.peak(k, matrix)
        if vendor > 0:
            return vendor, k, VENDOR
    return 0.0, key, VENDOR


def roofline_floor(target: Target, *, flops: float, min_bytes: float, dtype, matrix: bool,
                   ceilings: Ceilings | None = None, vector_flops: float = 0.0) -> Floor:
    """Least time for `flops` of `dtype` work (on the matrix units if `matrix`) moving `min_bytes`.

    `vector_flops` is extra work on the vector units beside matrix work (a GEMM's epilogue); its time
    adds to the compute time.
    """
    if flops < 0 or min_bytes < 0 or vector_flops < 0:
        raise ValueError(f"flops and min_bytes must be non-negative, got {flops=}, {min_bytes=}")
    key = dtype_key(dtype)
    peak, rate_key, compute_source = _rate(target, key, matrix, ceilings)
    if peak <= 0 and flops > 0:
        raise TargetError(f"target {target.name} has no {key} rate; pick another dtype or target")
    if ceilings is not None and ceilings.copy_bandwidth:
        bandwidth, memory_source = ceilings.copy_bandwidth, MEASURED
    else:
        bandwidth, memory_source = target.memory_bandwidth, VENDOR

    compute_s = flops / peak if flops else 0.0
    if vector_flops:
        vector_peak, _, _ = _rate(target, key, False, None)
        compute_s += vector_flops / vector_peak
        flops += vector_flops
    memory_s = min_bytes / bandwidth
    return Floor(
        target=target.name, dtype=key, rate_dtype=rate_key, matrix=matrix, flops=flops, min_bytes=min_bytes,
        seconds=max(compute_s, memory_s), compute_seconds=compute_s, memory_seconds=memory_s,
        bound="compute" if compute_s > memory_s else "memory",
        arithmetic_intensity=flops / min_bytes if min_bytes else math.inf,
        ridge_point=peak / bandwidth, peak_flops=peak, bandwidth=bandwidth,
        compute_source=compute_source, memory_source=memory_source,
    )
