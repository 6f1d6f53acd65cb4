"""The stopwatch: time several functions on the GPU, interleaved, with the L2 flushed before every run.

    timings = measure({"candidate": f, "eager": g, "compile": h}, input_sets)

- warm-up: each function runs `warmup` times first (compilation, autotuning, handle creation stay out);
- the number of timed rounds is chosen from the warm-up so that the whole takes about `budget_s`
  (between `min_runs` and `max_runs`);
- each round runs every function once, in the same order (A B C A B C ...), so clock and thermal drift
  fall on all of them alike;
- before every timed run a buffer of max(2 x L2, 256 MiB) is overwritten, so no run finds its inputs in L2;
- input sets rotate round by round (the caller passes several when one set fits in the cache);
- with `drained`, the host waits for the GPU (after the flush) before every timed run, so each run starts on an idle
  device: its time is its whole span, the host's launches included, whatever ran before it. Without it a run after
  one that queued more GPU work than its host time (a CUDA-graph replay) has its own launches hidden behind that
  queue, and looks faster than it is; whole launch-bound models (end_to_end: eager always came right after the
  optimized model's CUDA-graph replay) are timed drained;
- each run is bracketed by CUDA events; the result is the median with the spread (quartiles, min, max);
- the timed rounds hold the GPU's timing lock (`gpulock.py`): parallel bench jobs never time at once.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kerntailor.measure.gpulock import gpu_lock

FLUSH_MIN_BYTES = 256 << 20


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one function: the median of `runs` and the spread around it."""

    name: str
    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    max_s: float
    runs: int

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "median_s": self.median_s, "q1_s": self.q1_s, "q3_s": self.q3_s,
                "min_s": self.min_s, "max_s": self.max_s, "iqr_s": self.iqr_s, "runs": self.runs}


def summarize(name: str, seconds: Sequence[float]) -> Timing:
    xs = sorted(seconds)
    if len(xs) >= 4:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    else:
        q1, q3 = xs[0], xs[-1]
    return Timing(name, statistics.median(xs), q1, q3, xs[0], xs[-1], len(xs))


def l2_bytes(device) -> int:
    import torch

    props = torch.cuda.get_device_properties(device)
    return int(getattr(props, "L2_cache_size", 0) or getattr(props, "l2_cache_size", 0) or 64 << 20)


def flush_buffer(device, l2: int | None = None):
    """A byte buffer larger than the L2 (2x, at least 256 MiB); `buf.zero_()` evicts the L2."""
    import torch

    size = max(2 * (l2 if l2 is not None else l2_bytes(device)), FLUSH_MIN_BYTES)
    return torch.empty(size, dtype=torch.uint8, device=device)


def _runs_for_budget(fns, names, input_sets, buf, device, budget_s, min_runs, max_runs) -> int:
    """Timed rounds that fill about `budget_s`, from one timed call of each function (and one flush)."""
    import torch

    estimate = 0.0
    for name in names:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(device)
        start.record()
        fns[name](input_sets[0])
        end.record()
        torch.cuda.synchronize(device)
        estimate += start.elapsed_time(end) / 1e3
    if buf is not None:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        buf.zero_()
        end.record()
        torch.cuda.synchronize(device)
        estimate += len(names) * start.elapsed_time(end) / 1e3
    return int(min(max(budget_s / max(estimate, 1e-6), min_runs), max_runs))


def measure(fns: Mapping[str, Callable[[list[Any]], Any]], input_sets: Sequence[list[Any]], *,
            warmup: int = 3, budget_s: float = 2.0, min_runs: int = 10, max_runs: int = 300,
            flush: bool = True, device=None, drained: bool = False) -> dict[str, Timing]:
    """Time every function of `fns` (called as fn(inputs)) interleaved; see the module docstring."""
    import torch

    if not input_sets:
        raise ValueError("measure needs at least one input set")
    device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    buf = flush_buffer(device) if flush else None
    names = list(fns)

    with torch.no_grad():
        for name in names:  # compilation and autotuning happen here, outside the GPU's timing lock
            for i in range(warmup):
                fns[name](input_sets[i % len(input_sets)])
        torch.cuda.synchronize(device)
        with gpu_lock(device):
            runs = _runs_for_budget(fns, names, input_sets, buf, device, budget_s, min_runs, max_runs)
            events = {n: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                          for _ in range(runs)] for n in names}
            for r in range(runs):
                inputs = input_sets[r % len(input_sets)]
                for name in names:
                    if buf is not None:
                        buf.zero_()
                    if drained:
                        torch.cuda.synchronize(device)
                    start, end = events[name][r]
                    start.record()
                    fns[name](inputs)
                    end.record()
                if r % 32 == 31:
                    torch.cuda.synchronize(device)  # keep the queue of pending launches short
            torch.cuda.synchronize(device)
    return {n: summarize(n, [s.elapsed_time(e) / 1e3 for s, e in events[n]]) for n in names}
