"""The machine's ceilings, measured once and cached: copy bandwidth and library matmul rate per dtype.

- copy bandwidth: a 2 GiB device-to-device copy (`dst.copy_(src)`), counting bytes read plus written;
- matmul rate: torch.matmul at 8192^3 on random normal data, for fp32 (tf32 off), tf32, bf16 and fp16.

Each is the median of several timed runs after warm-up. The cache is one JSON file,
`$KERNTAILOR_HOME/ceilings.json` (default ~/.cache/kerntailor), keyed by device name and torch version, since a
new driver or library can move both. The environment is read when a function is called, never at import.
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
    """Measured rates of one device under one torch version. Bandwidth in bytes/s, rates in FLOP/s."""

    device_name: str
    torch_version: str
    copy_bandwidth: float
    matmul_flops: tuple[tuple[str, float], ...]
    l2_bytes: int
    measured_on: str       # ISO date

    def matmul(self, dtype: str) -> float:
        return dict(self.matmul_flops).get(dtype, 0.0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["matmul_flops"] = dict(self.matmul_flops)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ceilings:
        return cls(d["device_name"], d["torch_version"], float(d["copy_bandwidth"]),
                   tuple(sorted((k, float(v)) for k, v in d["matmul_flops"].items())), int(d["l2_bytes"]),
                   d["measured_on"])


def kerntailor_home() -> Path:
    return Path(os.environ.get("KERNTAILOR_HOME") or Path.home() / ".cache" / "kerntailor").expanduser()


def cache_path() -> Path:
    return kerntailor_home() / "ceilings.json"


def cache_key(device_name: str, torch_version: str) -> str:
    return f"{device_name} | torch {torch_version}"


def _median_time(fn, runs: int, warmup: int = 2) -> float:
    import torch

    for _ in range(warmup):
        fn()
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
    """Measure copy bandwidth and matmul rates on `device` (a few seconds on an H200)."""
    import torch

    from kerntailor.measure.stopwatch import l2_bytes

    device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    with torch.cuda.device(device), gpu_lock(device):
        src = torch.randn(COPY_BYTES // 4, device=device)
        dst = torch.empty_like(src)
        copy_s = _median_time(lambda d=dst, s=src: d.copy_(s), runs=10)
        del src, dst
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
                    tuple(sorted(rates.items())), l2_bytes(device), datetime.date.today().isoformat())


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
    if key in table and not refresh and "fp8" in table[key].get("matmul_flops", {}):   # older files lack fp8
        return Ceilings.from_dict(table[key])
    ceilings = measure_ceilings(device)
    table[key] = ceilings.to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(table, indent=2, sort_keys=True))
    os.replace(tmp, path)
    return ceilings
