"""GPU memory a generate job needs, and admission of parallel jobs by it (`kerntailor bench --jobs N`).

A job's peak is the referee's: the problem's inputs, parameters and outputs in their own dtype, the same again
upcast to float64 for the reference and its comparison (the judge's process), the candidate's inputs, its outputs
from two poisoned runs and the poison pool (the candidate's process), and the CUDA contexts of both; the timing phase (candidate,
eager and torch.compile interleaved on rotated input sets) needs less. The estimate is the sum of those terms
(`job_need`); it is a planning figure, not a measurement, and errs high.

Admission: every job reserves its estimate in a ledger per GPU (a JSON file under an flock, keyed by the GPU's
UUID like the timing lock) before it touches the GPU, and waits while the reservations of live jobs would
exceed the GPU's memory; a dead job's reservation is dropped (its pid is gone). A job that would not fit even
alone is refused in one line.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

CONTEXT_BYTES = 1 << 30         # per CUDA process (judge, candidate): context, cuBLAS/cuDNN workspaces
HEADROOM = 0.9                  # of the GPU's memory, for the allocator's fragmentation and other processes


@dataclass(frozen=True)
class MemoryNeed:
    """A job's planning figure in bytes, and the terms it is made of (the default variant's sizes)."""

    inputs: int
    parameters: int
    outputs: int
    total: int

    def gigabytes(self) -> float:
        return self.total / 1e9


def _nbytes(values) -> int:
    import torch

    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def job_need(problem) -> MemoryNeed:
    """The referee's peak on the GPU for `problem` (a ProblemSpec) at its default sizes (module docstring).
    Built on meta tensors: nothing is allocated."""
    import torch

    model = problem.make_model("default", "meta")
    inputs = problem.make_inputs("default", "meta")
    with torch.no_grad():
        out = model(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    tensors = [v for v in list(inputs) + list(model.parameters()) + list(model.buffers()) + outs
               if isinstance(v, torch.Tensor)]
    widest = max((v.element_size() for v in tensors if v.is_floating_point()), default=4)
    upcast = 8 / widest if widest < 8 else 1.0    # float64 copies of floating tensors, relative to their own size
    i, p, o = _nbytes(inputs), _nbytes(list(model.parameters()) + list(model.buffers())), _nbytes(outs)
    # the judge: inputs and parameters native and float64, the reference's outputs native and float64, and a
    # float64 difference while comparing; the candidate process: its inputs, parameters, two runs' outputs and
    # the poison pool (verify/judge.py, verify/candidate.py)
    referee = (i + p) * (2 + upcast) + o * (1 + 2 * upcast + 2 + 2)
    total = int(referee) + 2 * CONTEXT_BYTES
    return MemoryNeed(i, p, o, total)


def _ledger_path(device_index: int) -> Path:
    import torch

    from kerntailor.measure.gpulock import lock_path

    return lock_path(torch.device("cuda", device_index)).with_suffix(".memory.json")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def reserve(need: int, capacity: int, ledger: Path, poll_s: float = 1.0, on_wait=None):
    """Hold `need` bytes of the GPU whose ledger is `ledger` for the block: wait while the live reservations
    plus `need` exceed `capacity` (a job alone always starts). Raises MemoryError if `need` > `capacity`."""
    if need > capacity:
        raise MemoryError(f"needs about {need / 1e9:.1f} GB of GPU memory (inputs, parameters and outputs, a "
                          f"float64 reference and two candidate runs), the GPU has {capacity / 1e9:.1f} GB usable")
    me = str(os.getpid())
    waited = False
    while True:
        with _locked(ledger) as book:
            live = {pid: n for pid, n in book.items() if pid != me and _alive(int(pid))}
            if not live or sum(live.values()) + need <= capacity:
                book.clear()
                book.update(live | {me: need})
                break
        if not waited and on_wait is not None:
            on_wait(sum(live.values()))
        waited = True
        time.sleep(poll_s)
    try:
        yield
    finally:
        with _locked(ledger) as book:
            book.pop(me, None)


@contextlib.contextmanager
def _locked(ledger: Path):
    """The ledger's {pid: bytes} under an exclusive flock; written back when the block ends."""
    ledger.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(ledger, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.read(fd, 1 << 20).decode() or "{}"
        try:
            book = {str(k): int(v) for k, v in json.loads(raw).items()}
        except (ValueError, AttributeError):
            book = {}   # a torn or foreign file: start again (reservations of live jobs come back next poll)
        yield book
        data = json.dumps(book).encode()
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def gpu_reservation(problem, on_wait=None):
    """`reserve` for the problem's need on the GPU this process sees first; a no-op without a GPU."""
    import torch

    if not torch.cuda.is_available():
        return contextlib.nullcontext()
    capacity = int(torch.cuda.get_device_properties(0).total_memory * HEADROOM)
    return reserve(job_need(problem).total, capacity, _ledger_path(0), on_wait=on_wait)
