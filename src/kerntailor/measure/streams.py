"""Streams that only read or only write device memory: the floor's read and write rates.

A copy moves as many bytes each way and pays for the memory bus turning round between them; a kernel that
mostly reads streams faster (KernelBench's Huber loss ran at 0.91x a floor built on the copy rate, H200,
2026-12-01). The floor charges reads at the read rate and writes at the write rate, so both must be the
fastest this machine streams, not what one library kernel happens to reach: each is the best of several ways,
each way the median of timed runs over STREAM_BYTES (far past the L2, so the L2 holds no useful part):

- read: `torch.sum` over fp32 (a vectorised two-stage reduction), and `_read_kernel` at a few block sizes
  (each program loads BLOCK elements and writes one fp32 partial: 1 / BLOCK of the bytes read, left out of
  the count, which errs low by at most 0.1%);
- write: `fill_` and `zero_` (torch's vectorised fill) and `_write_kernel` at a few block sizes.

A way that fails to build or run on this GPU (a Triton or driver limit) is recorded with its error and
left out of the best.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import triton
import triton.language as tl

STREAM_BYTES = 2 << 30
# (BLOCK, num_warps): 16 to 64 fp32 per thread, as 128-bit loads and stores
TRITON_CONFIGS = ((4096, 4), (8192, 8), (16384, 16))


@triton.jit
def _read_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def _write_kernel(y_ptr, value, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full((BLOCK,), value, tl.float32), mask=offs < n)


@dataclass(frozen=True)
class StreamRate:
    """One way of streaming: bytes/s (the median of `runs`), or the error that stopped it (rate 0)."""

    kind: str              # "read" | "write"
    name: str              # "torch.sum", "triton BLOCK=8192 warps=8", ...
    bytes_per_s: float
    runs: int
    error: str = ""


def triton_read(x, partial, block: int, warps: int) -> None:
    """Sum each BLOCK of the flat fp32 `x` into `partial` (cdiv(x.numel(), block) fp32)."""
    n = x.numel()
    _read_kernel[(triton.cdiv(n, block),)](x, partial, n, BLOCK=block, num_warps=warps)


def triton_write(y, value: float, block: int, warps: int) -> None:
    """Fill the flat fp32 `y` with `value`."""
    n = y.numel()
    _write_kernel[(triton.cdiv(n, block),)](y, value, n, BLOCK=block, num_warps=warps)


def stream_ways(x, y) -> list[tuple[str, str, Callable[[], object]]]:
    """(kind, name, call) of every way timed: reads of the flat fp32 `x`, writes of the flat fp32 `y`."""
    import torch

    ways: list[tuple[str, str, Callable[[], object]]] = [("read", "torch.sum", lambda: torch.sum(x))]
    for block, warps in TRITON_CONFIGS:
        partial = torch.empty(triton.cdiv(x.numel(), block), dtype=torch.float32, device=x.device)
        ways.append(("read", f"triton BLOCK={block} warps={warps}",
                     lambda p=partial, b=block, w=warps: triton_read(x, p, b, w)))
    ways += [("write", "fill_", lambda: y.fill_(1.0)), ("write", "zero_", lambda: y.zero_())]
    for block, warps in TRITON_CONFIGS:
        ways.append(("write", f"triton BLOCK={block} warps={warps}",
                     lambda b=block, w=warps: triton_write(y, 1.0, b, w)))
    return ways


def measure_streams(device, nbytes: int = STREAM_BYTES, runs: int = 10, warmup: int = 2) -> tuple[StreamRate, ...]:
    """Every read and write way on `device` (the caller holds the GPU lock), `nbytes` each."""
    import torch

    from kerntailor.measure.ceilings import _median_time  # the ceilings' timer: one way of timing for every rate

    x = torch.rand(nbytes // 4, device=device)          # values in [0, 1): the sums stay finite
    y = torch.empty_like(x)
    rates = []
    for kind, name, call in stream_ways(x, y):
        try:
            seconds = _median_time(call, runs, warmup)
        except Exception as e:  # a way this GPU or toolchain cannot run is data, not the end of the measurement
            rates.append(StreamRate(kind, name, 0.0, 0, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"))
            continue
        rates.append(StreamRate(kind, name, nbytes / seconds, runs))
    del x, y
    return tuple(rates)


def best(rates: tuple[StreamRate, ...], kind: str) -> StreamRate | None:
    """The fastest way of `kind` that ran, or None."""
    ran = [r for r in rates if r.kind == kind and not r.error and r.bytes_per_s > 0]
    return max(ran, key=lambda r: r.bytes_per_s, default=None)
