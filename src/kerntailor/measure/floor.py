"""The roofline floor: no correct kernel runs much faster than max(flops / rate, memory time).

`floor_of` is a captured problem's floor on a target (its matrix FLOPs at the matrix rate, the rest at the
vector rate, its compulsory bytes at the bandwidth): from the targets table's peaks, or ceilings measured on the
machine. On the machine itself, two floors for two questions:

- `roofline_floor_s` uses the ceilings *measured* on this machine (ceilings.py): the honest yardstick for
  "how close to the limit is this kernel" (reported as time / floor; 1.0 is the limit). Its memory time
  charges the compulsory reads at the measured read rate and the compulsory writes at the measured write rate
  (read_bytes / read_bw + written_bytes / write_bw; targets/roofline.py says why the two add), so a kernel
  that mostly reads is held to the read rate, not to the slower copy rate it used to beat (Huber loss, 0.91x
  on an H200). With an older ceilings entry (copy only) every byte goes at the copy rate, as before, and
  `floor_label` says so.
- `physics_floor_s` is the referee's "faster than physics" line, see its docstring.
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
                              matrix=True, ceilings=ceilings, read_bytes=cost.min_bytes_read)
    return roofline_floor(target, flops=cost.flops_vector, min_bytes=cost.min_bytes, dtype=cost.dtype,
                          matrix=False, ceilings=ceilings, read_bytes=cost.min_bytes_read)


def _read_bytes(cost) -> int | None:
    """The reads of a (flops, min_bytes, dtype, matrix[, read_bytes]) cost; None where it does not say."""
    return cost[4] if len(cost) > 4 else None


def _rate_name(dtype: str, tf32: bool, precision: str = "ieee") -> str:
    if precision in ("fp8-row", "fp8-tensor"):   # every product runs on the fp8 units (precision.py)
        return "fp8"
    if dtype == "fp32" and tf32:
        return "tf32"
    return dtype if dtype in ("fp32", "tf32", "bf16", "fp16") else "fp32"


def roofline_floor_s(cost, ceilings, tf32: bool = False, precision: str = "ieee") -> float:
    """max(flops / measured rate, memory time), in seconds; `cost` is (flops, min_bytes, dtype, matrix[,
    read_bytes]) (a ProblemCost).

    Memory time: read_bytes / measured read bandwidth + the rest / measured write bandwidth, where the ceilings
    hold both and the cost says its reads; else min_bytes / measured copy bandwidth (`floor_label` says which).

    Matrix FLOPs use the library matmul rate of the dtype (tf32 for fp32 under the tf32 policy); other FLOPs
    use the fp32 matmul rate (close to the CUDA-core fp32 peak on NVIDIA; an approximation). Under the
    tf32x3 policy an fp32 product is three tf32 products (hi·lo + lo·hi + hi·hi): its floor is a third of
    the tf32 rate, the least time that method can take (not the ieee rate, which it does not use). Under
    the fp8 policies products run at the measured fp8 rate; the bytes stay the problem's (its inputs are
    read in their own dtype before anything is quantized).
    """
    flops, min_bytes, dtype, matrix = cost[:4]
    rate = ceilings.matmul(_rate_name(dtype, tf32 or precision == "tf32x3", precision) if matrix else "fp32")
    if matrix and dtype == "fp32" and precision == "tf32x3" and rate:
        rate /= 3
    compute = flops / rate if flops and rate else 0.0
    return max(compute, ceilings.memory_seconds(min_bytes, _read_bytes(cost)))


def library_floor_s(cost, ceilings) -> float | None:
    """The floor of what PyTorch's defaults run, where that is below roofline_floor_s's: an fp32 problem's
    convolutions at the measured tf32 rate (cuDNN runs them on TF32 unless told not to; NVIDIA only, where this
    process's PyTorch is not ROCm's), its other FLOPs as roofline_floor_s charges them. A time of the library path,
    or of a module whose convolutions are the library's, is bounded by this, not by the ieee floor (on the H100 a
    library convolution ran 3.8x under its problem's ieee floor: level-2 32, 2026-12-06). None where it is the
    same floor (no fp32 convolution, no tf32 rate, ROCm)."""
    import torch

    flops, min_bytes, dtype, matrix = cost[:4]
    conv = float(cost[5]) if len(cost) > 5 else 0.0
    tf32, fp32 = ceilings.matmul("tf32"), ceilings.matmul("fp32")
    if dtype != "fp32" or not matrix or conv <= 0 or not tf32 or not fp32 or torch.version.hip is not None:
        return None
    compute = conv / tf32 + max(0.0, flops - conv) / fp32
    return max(compute, ceilings.memory_seconds(min_bytes, _read_bytes(cost)))


def floor_label(cost, ceilings) -> str:
    """Which memory floor roofline_floor_s charged `cost`: 'read 4.71 TB/s, write 4.45 TB/s, measured on NVIDIA
    H200 2026-12-02', or the copy rate and why."""
    return ceilings.floor_label(split_bytes=_read_bytes(cost) is not None)


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
    """(seconds, source): the line under which a measured time is "suspect: faster than physics".

    A measured ceiling can be beaten a little (a Triton copy can edge out torch's), so this line uses the
    target's datasheet peaks when the targets table knows the GPU, else the measured ceilings with generous
    slack (x1.25 the fastest measured bandwidth of copy, read and write; x1.5 the matmul rate). For fp32 matrix
    work it uses the fastest rate an accurate fp32 method could use (tf32 units, as 3xTF32 does).

    The datasheet keeps one bandwidth for all bytes, and no correct kernel timed by the stopwatch can fall
    under min_bytes / datasheet bandwidth:
    - the datasheet bandwidth is the memory interface's peak (pins x transfer rate); reads and writes share
      those pins, so no mix of them moves more bytes per second, and every measured rate sits under it (H200:
      4.8 TB/s datasheet; copy measured 4.22 TB/s; benchmarks/bandwidth.py checks read and write against it);
    - the min_bytes must cross that interface inside the timed window: before every run the stopwatch
      overwrites a buffer of at least twice the L2, so no input is in the L2 (every compulsory read comes from
      memory) and the L2 is full of dirty lines, so each output line the kernel writes evicts one, written
      back in the window, even where the output itself stays in the L2 when the kernel ends;
    - the read and write rates the roofline floor uses are measured, never above the interface's peak, so
      this line sits under the roofline floor: a kernel can beat the roofline floor a little (a faster stream
      than any measured) but not this.
    What the argument assumes: no cache beyond the L2 larger than the flush buffer (max(2 x L2, 256 MiB));
    an MI300X's 256 MiB Infinity Cache is not flushed whole by it, and a kernel could read a small input from
    there faster than the datasheet's HBM rate. A kernel under this line is reading less than its inputs,
    skipping work, or timed wrongly: a bug, not a win.
    """
    flops, min_bytes, dtype, matrix = cost[:4]
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
        bandwidth = max(ceilings.copy_bandwidth, ceilings.read_bandwidth, ceilings.write_bandwidth) * BANDWIDTH_SLACK
        source = f"measured ceilings x{BANDWIDTH_SLACK} bandwidth, x{RATE_SLACK} rate"
    compute = flops / rate if flops and rate else 0.0
    memory = min_bytes / bandwidth if bandwidth else 0.0
    return max(compute, memory), source
