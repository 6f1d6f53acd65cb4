"""The roofline floor: the least time any kernel can take for a given amount of work on a target.

    floor = max(flops / peak_rate(dtype), min_bytes / bandwidth)

`min_bytes` is the compulsory traffic (read every input once, write every output once). Predicted mode
uses the vendor peaks of the Target (one datasheet bandwidth, for reads and writes alike); measured mode
passes `Ceilings` (bandwidths and library matmul rates measured once on the machine) and the Floor says which
source bound it. Where the ceilings hold a read and a write rate measured apart and the caller says how many
of the bytes are reads, the memory time charges each byte at its own rate:

    memory = read_bytes / read_bandwidth + written_bytes / write_bandwidth

since a GPU streams reads faster than it streams a copy (a read-mostly kernel beat the copy-bandwidth floor
on an H200: KernelBench's Huber loss at 0.91x). Reads and writes share the memory bus (HBM's data pins carry
one direction at a time), so their times add; what the sum leaves out (the bus turning round between reads
and writes) only makes a real kernel slower, so no kernel beats the split floor while the rates are the
fastest the machine streams. A copy sits a little above it, by that turnaround.

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
    """Ceilings measured on a machine; any left unset fall back to the Target's vendor peaks (or, for the
    read and write rates, to the copy bandwidth)."""

    copy_bandwidth: float | None = None                  # bytes/s, device-to-device copy (read + written)
    matmul_flops: tuple[tuple[str, float], ...] = ()     # library matmul FLOP/s per dtype key
    source: str = MEASURED                               # "measured H200 2026-11-29 torch 2.11"
    read_bandwidth: float | None = None                  # bytes/s, a stream that only reads (a reduction)
    write_bandwidth: float | None = None                 # bytes/s, a stream that only writes (a fill)

    def matmul_rate(self, key: str) -> float | None:
        return dict(self.matmul_flops).get(key)

    @property
    def split(self) -> bool:
        """Whether reads and writes have rates of their own."""
        return bool(self.read_bandwidth and self.write_bandwidth)


def memory_seconds(min_bytes: float, read_bytes: float | None, *, bandwidth: float,
                   read_bandwidth: float | None = None, write_bandwidth: float | None = None) -> float:
    """Least time to move `min_bytes`, of which `read_bytes` are reads: each at its own rate where both rates
    and the split are known, else all at `bandwidth` (see the module docstring)."""
    if read_bytes is not None and read_bandwidth and write_bandwidth:
        if not 0 <= read_bytes <= min_bytes:
            raise ValueError(f"read_bytes must lie in [0, min_bytes], got {read_bytes=}, {min_bytes=}")
        return read_bytes / read_bandwidth + (min_bytes - read_bytes) / write_bandwidth
    return min_bytes / bandwidth if bandwidth else 0.0


def bandwidth_label(*, bandwidth: float, read_bandwidth: float | None = None,
                    write_bandwidth: float | None = None, split_bytes: bool = True, source: str = MEASURED) -> str:
    """What the memory floor charged, in words: 'read 4.71 TB/s, write 4.45 TB/s', or one rate and why."""
    if read_bandwidth and write_bandwidth and split_bytes:
        return f"read {read_bandwidth / 1e12:.2f} TB/s, write {write_bandwidth / 1e12:.2f} TB/s"
    if source == VENDOR:
        return f"{bandwidth / 1e12:.2f} TB/s datasheet, one rate for reads and writes"
    if read_bandwidth and write_bandwidth:
        return f"copy {bandwidth / 1e12:.2f} TB/s for all bytes (the bytes were not split into reads and writes)"
    return f"copy {bandwidth / 1e12:.2f} TB/s for all bytes (read and write rates not measured apart)"


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
    bandwidth: float            # bytes/s used (with reads and writes apart: min_bytes / memory_seconds)
    compute_source: str         # "vendor peak" | "measured"
    memory_source: str          # "vendor peak" | "measured"
    read_bytes: float | None = None   # of min_bytes, the reads (None: not split)
    memory_label: str = ""            # what the memory time charged: "read 4.71 TB/s, write 4.45 TB/s"

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
                   ceilings: Ceilings | None = None, vector_flops: float = 0.0,
                   read_bytes: float | None = None) -> Floor:
    """Least time for `flops` of `dtype` work (on the matrix units if `matrix`) moving `min_bytes`.

    `vector_flops` is extra work on the vector units beside matrix work (a GEMM's epilogue); its time
    adds to the compute time. `read_bytes` (of `min_bytes`, the reads) lets measured ceilings with a read
    and a write rate charge each byte at its own rate; the datasheet has one bandwidth, used for both.
    """
    if flops < 0 or min_bytes < 0 or vector_flops < 0:
        raise ValueError(f"flops and min_bytes must be non-negative, got {flops=}, {min_bytes=}")
    key = dtype_key(dtype)
    peak, rate_key, compute_source = _rate(target, key, matrix, ceilings)
    if peak <= 0 and flops > 0:
        raise TargetError(f"target {target.name} has no {key} rate; pick another dtype or target")
    read_bw = write_bw = None
    if ceilings is not None and ceilings.copy_bandwidth:
        bandwidth, memory_source = ceilings.copy_bandwidth, MEASURED
        read_bw, write_bw = ceilings.read_bandwidth, ceilings.write_bandwidth
    else:
        bandwidth, memory_source = target.memory_bandwidth, VENDOR

    compute_s = flops / peak if flops else 0.0
    if vector_flops:
        vector_peak, _, _ = _rate(target, key, False, None)
        compute_s += vector_flops / vector_peak
        flops += vector_flops
    memory_s = memory_seconds(min_bytes, read_bytes, bandwidth=bandwidth, read_bandwidth=read_bw,
                              write_bandwidth=write_bw)
    split = read_bytes is not None and bool(read_bw and write_bw)
    label = bandwidth_label(bandwidth=bandwidth, read_bandwidth=read_bw, write_bandwidth=write_bw,
                            split_bytes=read_bytes is not None, source=memory_source)
    if split and memory_s > 0:
        bandwidth = min_bytes / memory_s
    elif split:
        bandwidth = read_bw
    return Floor(
        target=target.name, dtype=key, rate_dtype=rate_key, matrix=matrix, flops=flops, min_bytes=min_bytes,
        seconds=max(compute_s, memory_s), compute_seconds=compute_s, memory_seconds=memory_s,
        bound="compute" if compute_s > memory_s else "memory",
        arithmetic_intensity=flops / min_bytes if min_bytes else math.inf,
        ridge_point=peak / bandwidth, peak_flops=peak, bandwidth=bandwidth,
        compute_source=compute_source, memory_source=memory_source, read_bytes=read_bytes, memory_label=label,
    )
