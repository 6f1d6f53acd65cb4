"""GPU memory the referee needs, where it keeps the float64 reference, and admission of parallel jobs by it.

What the judge holds, measured (tests/test_verify_memory.py: the judge's case() in one process on the CPU, its
tensors counted by LiveBytes; the candidate process not counted; the peak of each step as a multiple of the
problem's inputs + parameters + outputs, fp32, first draw; 2026-12-01):

    problem (variant)            before this plan: reference step / compare step    now, reference kept here
    relu (default, 1 GiB in)     5.14 / 3.14                                        3.20 / 3.14
    layernorm (default, 256 MiB) 7.06 / 5.06                                        5.31 / 5.06
    layernorm (small, 128 KiB)   13.3 / 11.3                                        12.3 / 11.3
    gemm_bias_relu (small)       10.3 / 9.05                                        9.82 / 9.05

The peak of a case is always the reference step: the float64 outputs (2x the fp32 outputs) held while the reference also
runs in its own dtype (its outputs, the eager comparison) and twice on one draw (a random reference is refused:
a second copy of the inputs and outputs, one input copy at a time now); then the comparison's float64 chunk
temporaries (about 9 chunks of CHUNK_BYTES, whole outputs below that size: the large multiples of
the small variants). The float64 forward itself is 2.5x (relu, layernorm) to 3.4x (gemm).

So the plan (referee_plan) is, first fit wins: everything on the GPU; the float64 outputs kept on the host (the
judge computes the reference on the GPU, moves its outputs to the host at once and compares a chunk at a time:
the GPU then holds no float64 copy of an output while the candidate runs); the float64 reference computed and
kept on the host (a host copy of the model and inputs, float64 all the same: the tolerance never changes). A
problem that fits none is refused in one line (MemoryRefused) before any work: `kerntailor verify`, `generate`
and `bench` (a refused row). Under the interpreter the budget is the host's (MemAvailable, or the cgroup's
limit), so a small CI machine refuses a file too big for it instead of being killed.

The need of a plan (_needs) is counted on the meta device (footprint: the tensors, and the peak of each forward
by LiveBytes) for the variants that run: the judge (inputs and parameters, then the largest of its float64
forward, the reference step and the comparison step), the candidate process (its parameters, pristine and run
inputs, forward and poison pool), and the CUDA contexts of both; a planning figure that errs high.

What that count left out (issue #14 item 5; on the H200, 2026-12-03f, reductions with small outputs reserved 3.4x
the plan: 49_Max_reduction bf16 109.5 GB against 32.2): the draws, the timing and the allocator's cache.
- A draw (verify/draws.py) is the judge's peak wherever the outputs are small: get_inputs() builds fp32 before
  the cast (`make`, counted on meta), and a redraw holds fp32 temporaries beside the problem's own values, 13 bytes
  an element of a floating input for the outliers draw (z, pick, mag, sign(z)), 17 for the special one (on the
  smallest variant): 15 and 23 bytes an element of a bf16 input in all. These are what LiveBytes counts on the
  CPU (tests/test_ledger.py). The draws now work in place (21 and 49 bytes before; the values are the same).
- Timing, in the candidate process: the reference model beside the candidate's, a fresh input set (four where
  small), eager's and torch.compile's outputs, the L2 flush buffer.
- What the caching allocator reserves over what is held: 2.08x in the judge, 1.55x in the candidate process
  (22_Tanh fp32, alone on the H200: 94.0 / 45.1 GB, 53.2 / 34.4 GB), while blocks of a draw's fp32, the float64
  reference and the outputs stayed cached across steps. The ledger reserves RESERVED_FACTOR (2.1, the worst
  seen) times the sum of both processes' peaks (`reservation`), at most the whole GPU where the tensors alone fit
  it: such a job runs alone. The judge now gives its cache back between steps (Judge.release), so 2.1 is a margin
  until it is measured again (benchmarks/gpu_calls/ledger_peaks.sh); plans are chosen, and problems refused, by
  the tensors' need alone, as before.

Admission: every bench job reserves its figure in a ledger per GPU (a JSON file under an flock, keyed by the
GPU's UUID like the timing lock) before it touches the GPU, and waits while the reservations of live jobs would
exceed the GPU's memory; a dead job's reservation is dropped (its pid is gone). A job that would not fit even
alone is refused in one line. Within a job the reservation is the budget its referee plans with.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from kerntailor.errors import KerntailorError

CONTEXT_BYTES = 1 << 30         # per CUDA process (judge, candidate): context, cuBLAS/cuDNN workspaces
PROCESS_BYTES = 512 << 20       # per process on the host (judge, candidate): Python, torch and triton loaded
HEADROOM = 0.9                  # of the memory free, for the allocator's fragmentation and other processes
CHUNK_BYTES = 128 << 20   # float64 bytes of one chunk of an output: the comparison's temporaries are a few times this
COMPARE_CHUNKS = 10             # float64 chunks (CHUNK_BYTES) the comparison holds at once, at most
DRAW_TEMP_BYTES = 13           # fp32 temporaries an element of a floating input at a draw's peak (draws._raw's
#                                outliers: z 4, pick 1, mag 4, sign(z) 4), beside the problem's own inputs
SPECIAL_TEMP_BYTES = 17        # the special-values draw's (draws._with_specials: int64 kinds, the pick mask, rand)
FLUSH_BYTES = 256 << 20        # the stopwatch's L2 flush buffer (measure/stopwatch.FLUSH_MIN_BYTES)
SMALL_SET_BYTES = 512 << 20    # input sets under this may be rotated four at a time when timing (baselines)
RESERVED_FACTOR = 2.1          # what the caching allocator reserves over what the tensors hold at the peak
BUDGET_ENV = "KERNTAILOR_MEMORY_BUDGET"   # bytes ("6GB", "512MB", "1000000") the referee may use, overriding
#                                           what the device (or the host, under the interpreter) has free

_reserved: int | None = None    # what this process reserved in the ledger (reserve): its budget under bench


class MemoryRefused(KerntailorError, MemoryError):
    """A problem whose referee cannot fit in the memory there is: refused in one line before any work."""


@dataclass(frozen=True)
class Footprint:
    """One variant's tensors, in bytes, counted on the meta device (nothing allocated).

    `forward`: the most bytes the forward in the problem's dtype holds at once beyond its inputs and parameters
    (its outputs and intermediates: LiveBytes); `forward64` the same in float64 (footprint says how)."""

    variant: str
    inputs: int
    parameters: int
    outputs: int
    forward: int
    inputs64: int
    parameters64: int
    outputs64: int
    forward64: int
    float_elems: int = 0    # elements of the floating inputs: the ones a draw redraws (verify/draws.py)
    float_inputs: int = 0   # their bytes
    make: int = 0           # the most bytes get_inputs() and its cast to the problem's dtype hold at once


@dataclass(frozen=True)
class MemoryPlan:
    """Where the referee keeps what (reference: "device" or "host", for the float64 forward; keep: where its
    float64 outputs stay while the candidate runs) and what that needs on each side, in bytes."""

    reference: str
    keep: str
    device_need: int
    host_need: int
    device_budget: int
    host_budget: int
    variant: str            # the variant with the largest need

    def to_job(self) -> dict:
        return {"reference": self.reference, "keep": self.keep, "note": self.note()}

    def note(self) -> str | None:
        """A line for the verdict's notes where the plan moves work to the host; None otherwise."""
        if self.keep == "device":
            return None
        what = "computed and kept" if self.reference == "host" else "computed on the GPU and kept"
        return (f"memory: the float64 reference {what} on the host, compared a chunk at a time (variant "
                f"{self.variant}: ~{self.device_need / 1e9:.1f} GB on the GPU, {self.host_need / 1e9:.1f} GB on "
                f"the host; budgets {self.device_budget / 1e9:.1f} / {self.host_budget / 1e9:.1f} GB)")


@dataclass(frozen=True)
class MemoryNeed:
    """A job's planning figure in bytes, and the terms it is made of (the default variant's sizes)."""

    inputs: int
    parameters: int
    outputs: int
    total: int      # the reservation (reservation(): the tensors, the allocator's margin, at most the GPU)
    held: int = 0   # what the tensors alone need at the peaks (_needs, with the CUDA contexts)

    def gigabytes(self) -> float:
        return self.total / 1e9


class LiveBytes:
    """A dispatch mode that counts the storage bytes of the tensors made inside it while they are alive:
    `peak` is the most at once (a view adds nothing; a tensor that was passed in adds nothing). Works on meta
    (an estimate), the CPU and the GPU (a count of tensor storage, not of the allocator's cache)."""

    def __init__(self, existing=()):
        import torch

        self.known = {t.untyped_storage()._cdata for t in existing if isinstance(t, torch.Tensor)}
        self.live: dict[int, list[int]] = {}   # storage -> [bytes, tensors alive on it]
        self.now = self.peak = 0

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        counter = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                counter._count(out)
                return out

        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self._mode.__exit__(*exc)

    def _count(self, out) -> None:
        import torch
        from torch.utils._pytree import tree_leaves

        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            key = storage._cdata
            if key in self.known:
                continue
            entry = self.live.get(key)
            if entry is None:
                entry = self.live[key] = [storage.nbytes(), 0]
                self.now += entry[0]
                self.peak = max(self.peak, self.now)
            entry[1] += 1
            weakref.finalize(t, self._drop, key)

    def _drop(self, key: int) -> None:
        entry = self.live.get(key)
        if entry is not None:
            entry[1] -= 1
            if entry[1] == 0:
                self.now -= entry[0]
                del self.live[key]


def _nbytes(values) -> int:
    import torch

    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _forward_peak(model, inputs) -> tuple[int, list]:
    """(the most bytes the forward holds at once beyond its inputs and parameters, its tensor outputs)."""
    import torch

    with torch.no_grad(), LiveBytes(list(inputs) + list(model.parameters()) + list(model.buffers())) as live:
        out = model(*inputs)
    return live.peak, [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]


_footprints: dict[tuple[str, str], Footprint] = {}   # (problem.key(), variant): counted once per process


def footprint(problem, variant: str = "default") -> Footprint:
    """The variant's tensors and forward peak on the meta device; the float64 figures are the same tensors
    with every floating one 8 bytes an element (the float64 forward's peak: the native one scaled by the
    widest upcast, which errs high where it holds integer tensors). One meta forward: seconds for a long
    recurrent network (KernelBench's LSTMs: 7 s), so kept per process."""
    key = (problem.key(), variant)
    if key not in _footprints:
        _footprints[key] = _count(problem, variant)
    return _footprints[key]


def _count(problem, variant: str) -> Footprint:
    import torch

    model = problem.make_model(variant, "meta")
    with LiveBytes() as made:   # get_inputs() builds fp32 (and its own temporaries) before the cast
        inputs = problem.make_inputs(variant, "meta")
    state = list(model.parameters()) + list(model.buffers())
    forward, outs = _forward_peak(model, inputs)

    def bytes64(values) -> int:
        return sum(v.numel() * (8 if v.is_floating_point() else v.element_size())
                   for v in values if isinstance(v, torch.Tensor))

    narrowest = min((t.element_size() for t in state + outs + list(inputs)
                     if isinstance(t, torch.Tensor) and t.is_floating_point()), default=8)
    floats = [x for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    return Footprint(variant, _nbytes(inputs), _nbytes(state), _nbytes(outs), forward, bytes64(inputs),
                     bytes64(state), bytes64(outs), forward * 8 // narrowest, sum(x.numel() for x in floats),
                     _nbytes(floats), made.peak)


def _draw_peak(f: Footprint, dist: str = "outliers") -> int:
    """The most bytes drawing one input set of `dist` holds (verify/draws.py; the last set is freed first):
    get_inputs() and its cast, then the redraw: the problem's own values, the fp32 temporaries, the result
    (z, 4 bytes an element, beside the result at the end of every redraw)."""
    last = f.inputs + 4 * f.float_elems + f.float_inputs
    if dist == "special":
        return max(f.make, f.inputs + 2 * f.float_inputs + SPECIAL_TEMP_BYTES * f.float_elems)
    if dist == "outliers":
        return max(f.make, last, f.inputs + DRAW_TEMP_BYTES * f.float_elems)
    return max(f.make, last)   # normal, uniform: z transformed in place


def _needs(f: Footprint, reference: str, keep: str, gpu: bool, special: bool = False) -> tuple[int, int]:
    """(device bytes, host bytes) of one verification of variant `f` under a plan (terms: module docstring).
    `special`: the special-values draw runs on this variant (the smallest one judged)."""
    compare = COMPARE_CHUNKS * min(CHUNK_BYTES, f.outputs64)
    judging = f.parameters + 2 * f.inputs + f.forward + 2 * f.outputs
    # timing (candidate.op_time): the reference model beside the candidate's, a fresh input set (more where
    # small), eager's and torch.compile's outputs, the L2 flush buffer
    timing = 2 * f.parameters + max(_draw_peak(f, "normal"), f.inputs + 2 * f.forward) + FLUSH_BYTES + \
        3 * min(f.inputs, SMALL_SET_BYTES)
    candidate = max(judging, timing)
    ref64 = f.parameters64 + f.inputs64 + f.forward64
    kept = f.outputs64 if keep == "device" else 0
    case = f.inputs + max(ref64 if reference == "device" else 0,
                          kept + f.inputs + f.forward + f.outputs + compare,
                          kept + 2 * f.outputs + compare)
    judge = f.parameters + max(case, _draw_peak(f), _draw_peak(f, "special") if special else 0)
    host = (0 if keep == "device" else f.outputs64) + \
        (f.parameters + f.inputs + ref64 if reference == "host" else 0)
    if not gpu:
        return judge + candidate + 2 * PROCESS_BYTES, 0
    return judge + candidate + 2 * CONTEXT_BYTES, host + 2 * PROCESS_BYTES


def reservation(need: int, capacity: int) -> int:
    """What the ledger reserves for a job whose tensors need `need` bytes of the GPU (`_needs`, the contexts in
    it): RESERVED_FACTOR over the tensors for the allocator's cache and fragmentation, but never more than the
    GPU's `capacity` where the tensors alone fit it (such a job runs alone, and an allocator that cannot grow
    gives its own cache back before it fails); `need` itself where it does not fit (refused by `reserve`)."""
    if need > capacity:
        return need
    return min(capacity, int(RESERVED_FACTOR * (need - 2 * CONTEXT_BYTES)) + 2 * CONTEXT_BYTES)


PLANS = (("device", "device"), ("device", "host"), ("host", "host"))   # preferred first: fastest


def _parse_bytes(text: str) -> int:
    units = {"": 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
             "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
    t = text.strip().upper().replace(" ", "")
    num = t.rstrip("KMGTIB")
    try:
        return int(float(num) * units[t[len(num):]])
    except (KeyError, ValueError):
        raise KerntailorError(f"{BUDGET_ENV}={text!r} is not a size: write bytes, or a number with KB, MB, GB "
                              "(or KiB, MiB, GiB)") from None


def host_free() -> int:
    """Bytes the host can give: MemAvailable, or less where this process's cgroup (a container, a CI job)
    allows less."""
    free = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                free = int(line.split()[1]) * 1024
    except OSError:
        pass
    if free is None:
        free = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        if limit != "max":
            free = min(free, int(limit) - used)
    except (OSError, ValueError):
        pass
    return max(free, 0)


def gpu_budget(index: int = 0) -> int:
    """What this process's referee may use of the GPU: its reservation under bench (the ledger admitted it
    beside the other jobs), else what is free now (other processes' use counted) times HEADROOM."""
    import torch

    if _reserved is not None:
        return _reserved
    try:   # NVML / amd-smi: opens no CUDA context in this process (the CLI's)
        free = torch.cuda.get_device_properties(index).total_memory - torch.cuda.device_memory_used(index)
    except Exception:   # noqa: BLE001 - no pynvml / amdsmi: ask the runtime
        free = torch.cuda.mem_get_info(index)[0]
    return int(free * HEADROOM)


def referee_plan(problem, variants: list[str], gpu: bool, device_budget: int | None = None,
                 host_budget: int | None = None) -> MemoryPlan:
    """The first plan (PLANS) whose need fits the budgets for the largest of `variants`; MemoryRefused when
    none does. Budgets: BUDGET_ENV if set (the device's, or the host's under the interpreter), else what is
    free, times HEADROOM."""
    override = os.environ.get(BUDGET_ENV)
    if host_budget is None:
        host_budget = int(host_free() * HEADROOM)
    if device_budget is None:
        device_budget = gpu_budget() if gpu else int(host_free() * HEADROOM)
    if override:
        device_budget = _parse_bytes(override)
        if not gpu:
            host_budget = device_budget
    prints = [footprint(problem, v) for v in variants]
    special = special_variant(problem, variants)
    tried = None
    for reference, keep in (PLANS if gpu else PLANS[:1]):
        need = [_needs(f, reference, keep, gpu, f.variant == special) for f in prints]
        at = max(range(len(need)), key=lambda i: need[i][0])
        tried = MemoryPlan(reference, keep, need[at][0], max(n[1] for n in need), device_budget, host_budget,
                           prints[at].variant)
        if tried.device_need <= device_budget and tried.host_need <= host_budget:
            return tried
        if tried.device_need <= device_budget:   # the host is short: later plans put more on it
            break
    f = prints[[p.variant for p in prints].index(tried.variant)]
    if tried.device_need > device_budget:
        need, side, has = tried.device_need, "GPU" if gpu else "host", device_budget
    else:
        need, side, has = tried.host_need, "host", host_budget
    raise MemoryRefused(f"{problem.name}: too big to verify here: needs ~{need / 1e9:.1f} GB, the {side} has "
                        f"{has / 1e9:.1f} GB free (variant {f.variant}: inputs {f.inputs / 1e9:.2g} GB, parameters "
                        f"{f.parameters / 1e9:.2g} GB, outputs {f.outputs / 1e9:.2g} GB; the float64 reference "
                        f"{'on the host' if tried.reference == 'host' else 'on the GPU' if gpu else 'beside them'})")


def job_need(problem, capacity: int | None = None) -> MemoryNeed:
    """The referee's need on the GPU for `problem` at its default sizes under the first plan that fits the
    GPU's whole memory (referee_plan; `capacity`, default the GPU's times HEADROOM), and the reservation bench
    makes for it (`reservation`). Counted on meta tensors."""
    import torch

    total = capacity if capacity is not None else \
        int(torch.cuda.get_device_properties(0).total_memory * HEADROOM) if torch.cuda.is_available() else 1 << 62
    f = footprint(problem, "default")
    special = special_variant(problem, [v.name for v in problem.variants]) == "default"
    for reference, keep in PLANS:
        need = _needs(f, reference, keep, gpu=True, special=special)[0]
        if need <= total:
            break
    return MemoryNeed(f.inputs, f.parameters, f.outputs, reservation(need, total), need)


def special_variant(problem, variants: list[str]) -> str | None:
    """The variant the special-values draw runs on: the smallest of `variants` by its largest input (the first
    on a tie; verify/referee.special_variant is this); counted on meta inputs."""
    import torch

    def largest(name: str) -> int:
        return max((x.numel() for x in problem.make_inputs(name, "meta") if isinstance(x, torch.Tensor)), default=0)

    if not variants:
        return None
    try:
        return min(variants, key=largest)
    except Exception:  # noqa: BLE001 - sizes unknown on the meta device: the first variant judged
        return variants[0]


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
    global _reserved
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
    _reserved = need
    try:
        yield
    finally:
        _reserved = None
        with _locked(ledger) as book:
            book.pop(me, None)


@contextlib.contextmanager
def _locked(ledger: Path):
    """The ledger's {pid: bytes}, under an exclusive FileLock beside it; written back when the block ends."""
    from filelock import FileLock

    ledger.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(ledger.with_name(ledger.name + ".lock"), mode=0o666):
        # written in place (not renamed over): in the shared temp directory another user's file cannot be replaced
        with os.fdopen(os.open(ledger, os.O_RDWR | os.O_CREAT, 0o666), "r+") as f:
            raw = f.read() or "{}"
            try:
                book = {str(k): int(v) for k, v in json.loads(raw).items()}
            except (ValueError, AttributeError):
                book = {}   # a torn or foreign file: start again (reservations of live jobs come back next poll)
            yield book
            f.seek(0)
            f.truncate()
            f.write(json.dumps(book))


def gpu_reservation(problem, on_wait=None):
    """`reserve` for the problem's need on the GPU this process sees first; a no-op without a GPU."""
    import torch

    if not torch.cuda.is_available():
        return contextlib.nullcontext()
    capacity = int(torch.cuda.get_device_properties(0).total_memory * HEADROOM)
    return reserve(job_need(problem).total, capacity, _ledger_path(0), on_wait=on_wait)
