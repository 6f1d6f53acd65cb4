"""The machine's ceilings, measured once and cached: copy, read and write bandwidth and library matmul rates.

- copy bandwidth: a 2 GiB device-to-device copy (`dst.copy_(src)`), counting bytes read plus written;
- read bandwidth: the fastest of several streams that read 2 GiB and write almost nothing (streams.py:
  torch.sum and a Triton block-sum); write bandwidth: the fastest of several 2 GiB fills (fill_, zero_, a
  Triton store). The floor charges reads and writes each at its own rate (floor.py);
- matmul rate: torch.matmul at 8192^3 on random normal data, for fp32 (tf32 off), tf32, bf16 and fp16.

Each is the median of several timed runs after warm-up. The cache is one JSON file,
`$KERNTAILOR_HOME/ceilings.json` (default ~/.cache/kerntailor), keyed by device name and torch version, since a
new driver or library can move both; an entry written before a rate was measured (fp8, read and write) is
measured again. An older entry read directly (a committed data file) keeps read and write at 0.0: the floor
then charges every byte at the copy rate and says so (`floor_label`). The environment is read when a function
is called, never at import.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kerntailor.measure.gpulock import gpu_lock

COPY_BYTES = 2 << 30
MATMUL_N = 8192
MATMUL_DTYPES = ("fp32", "tf32", "bf16", "fp16")


@dataclass(frozen=True)
class Ceilings:
    """Measured rates of one device under one torch version. Bandwidth in bytes/s, rates in FLOP/s; a read or
    write bandwidth of 0.0 was not measured (an older cache entry)."""

    device_name: str
    torch_version: str
    copy_bandwidth: float
    matmul_flops: tuple[tuple[str, float], ...]
    l2_bytes: int
    measured_on: str       # ISO date
    read_bandwidth: float = 0.0
    write_bandwidth: float = 0.0
    read_method: str = ""      # the stream that set read_bandwidth: "torch.sum", "triton BLOCK=8192 warps=8"
    write_method: str = ""

    def matmul(self, dtype: str) -> float:
        return dict(self.matmul_flops).get(dtype, 0.0)

    @property
    def split(self) -> bool:
        """Whether reads and writes were measured apart."""
        return self.read_bandwidth > 0 and self.write_bandwidth > 0

    def memory_seconds(self, min_bytes: float, read_bytes: float | None) -> float:
        """Least time to move `min_bytes`, `read_bytes` of them reads (None: not known): each at its own rate
        where both were measured, else all at the copy rate."""
        from kerntailor.targets.roofline import memory_seconds

        return memory_seconds(min_bytes, read_bytes, bandwidth=self.copy_bandwidth,
                              read_bandwidth=self.read_bandwidth, write_bandwidth=self.write_bandwidth)

    def floor_label(self, split_bytes: bool = True) -> str:
        """Which memory floor these ceilings give, in words: 'read 4.71 TB/s, write 4.45 TB/s, measured on
        NVIDIA H200 2026-12-02'; with one rate, which and why."""
        from kerntailor.targets.roofline import bandwidth_label

        rates = bandwidth_label(bandwidth=self.copy_bandwidth, read_bandwidth=self.read_bandwidth,
                                write_bandwidth=self.write_bandwidth, split_bytes=split_bytes)
        return f"{rates}, measured on {self.device_name} {self.measured_on}"

    def to_roofline(self, matmul: bool = False):
        """The targets.Ceilings that roofline_floor takes: the bandwidths, and the matmul rates if `matmul`
        (else the target's vendor peaks set the compute floor)."""
        from kerntailor.targets.roofline import Ceilings as RooflineCeilings

        return RooflineCeilings(copy_bandwidth=self.copy_bandwidth,
                                matmul_flops=self.matmul_flops if matmul else (),
                                source=f"measured on {self.device_name} {self.measured_on}",
                                read_bandwidth=self.read_bandwidth or None,
                                write_bandwidth=self.write_bandwidth or None)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["matmul_flops"] = dict(self.matmul_flops)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ceilings:
        """From to_dict's form; an entry written before read and write were measured reads them as 0.0."""
        return cls(d["device_name"], d["torch_version"], float(d["copy_bandwidth"]),
                   tuple(sorted((k, float(v)) for k, v in d["matmul_flops"].items())), int(d["l2_bytes"]),
                   d["measured_on"], float(d.get("read_bandwidth") or 0.0), float(d.get("write_bandwidth") or 0.0),
                   str(d.get("read_method") or ""), str(d.get("write_method") or ""))


def kerntailor_home() -> Path:
    return Path(os.environ.get("KERNTAILOR_HOME") or Path.home() / ".cache" / "kerntailor").expanduser()


def cache_path() -> Path:
    return kerntailor_home() / "ceilings.json"


def cache_key(device_name: str, torch_version: str) -> str:
    return f"{device_name} | torch {torch_version}"


def _median_time(fn, runs: int, warmup: int = 2) -> float:
    """Median seconds of `runs` calls of `fn`, each bracketed by CUDA events, after `warmup` calls."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def measure_ceilings(device=None) -> Ceilings:
    """Measure copy, read and write bandwidth and matmul rates on `device` (a few seconds on an H200)."""
    import torch

    from kerntailor.measure.stopwatch import l2_bytes
    from kerntailor.measure.streams import best, measure_streams

    device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    with torch.cuda.device(device), gpu_lock(device):
        src = torch.randn(COPY_BYTES // 4, device=device)
        dst = torch.empty_like(src)
        copy_s = _median_time(lambda d=dst, s=src: d.copy_(s), runs=10)
        del src, dst
        streams = measure_streams(device, COPY_BYTES)
        read, write = best(streams, "read"), best(streams, "write")
        rates = {}
        saved = torch.backends.cuda.matmul.allow_tf32
        try:
            for name in MATMUL_DTYPES:
                dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
                         "fp16": torch.float16}[name]
                torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
                a = torch.randn(MATMUL_N, MATMUL_N, device=device).to(dtype)
                b = torch.randn(MATMUL_N, MATMUL_N, device=device).to(dtype)
                t = _median_time(lambda a=a, b=b: torch.matmul(a, b), runs=5)
                rates[name] = 2.0 * MATMUL_N ** 3 / t
                del a, b
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        rates["fp8"] = _fp8_rate(device)
        torch.cuda.empty_cache()
    return Ceilings(torch.cuda.get_device_name(device), torch.__version__, 2.0 * COPY_BYTES / copy_s,
                    tuple(sorted(rates.items())), l2_bytes(device), datetime.date.today().isoformat(),
                    read.bytes_per_s if read else 0.0, write.bytes_per_s if write else 0.0,
                    read.name if read else "", write.name if write else "")


def _fp8_rate(device) -> float:
    """torch._scaled_mm's e4m3 rate (e4m3fnuz on ROCm) at MATMUL_N^3, unit scales, bf16 out; 0.0 where this
    GPU or torch has no fp8 matmul."""
    import torch

    dtype = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn
    try:
        a = torch.randn(MATMUL_N, MATMUL_N, device=device).to(dtype)
        b = torch.randn(MATMUL_N, MATMUL_N, device=device).to(dtype).t()   # column-major, as _scaled_mm wants
        one = torch.ones((), device=device)
        t = _median_time(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), runs=5)
    except (RuntimeError, AttributeError, TypeError):
        return 0.0
    return 2.0 * MATMUL_N ** 3 / t


def load_ceilings(device=None, refresh: bool = False) -> Ceilings:
    """The cached ceilings for this device and torch version; measured (and cached) on a miss."""
    import torch

    device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    key = cache_key(torch.cuda.get_device_name(device), torch.__version__)
    path = cache_path()
    table: dict[str, Any] = {}
    if path.exists():
        try:
            table = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            table = {}
    if key in table and not refresh and _complete(table[key]):
        return Ceilings.from_dict(table[key])
    ceilings = measure_ceilings(device)
    table[key] = ceilings.to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(table, indent=2, sort_keys=True))
    os.replace(tmp, path)
    return ceilings


def _complete(entry: dict[str, Any]) -> bool:
    """Whether a cached entry holds every rate measured today (older files lack fp8, then read and write; a
    rate of 0.0 that was measured, where every way failed, is not measured again on every call)."""
    return "fp8" in entry.get("matmul_flops", {}) and "read_bandwidth" in entry and "write_bandwidth" in entry
