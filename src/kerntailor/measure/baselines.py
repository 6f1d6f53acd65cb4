"""Time a verified candidate against what a user would run instead: eager PyTorch and torch.compile.

All three run interleaved in one process (stopwatch.measure), on the same rotated input sets, with the L2
flushed before every run; the floor comes from the machine's measured ceilings (ceilings.py) and the
problem's cost (cost.py). The referee splits it: `time_functions` runs in the candidate's sandboxed process
after the verdict, `timing_report` in the judge.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kerntailor.measure.stopwatch import Timing


@dataclass(frozen=True)
class TimingReport:
    """Candidate, baselines and floors on one device, all measured in one process."""

    device_name: str
    torch_version: str
    triton_version: str
    date: str
    timings: tuple[Timing, ...]              # candidate first, then eager, compile
    floor_s: float                           # roofline floor from the measured ceilings
    physics_floor_s: float                   # the "faster than physics" line
    physics_source: str
    flops: float
    min_bytes: int
    dtype: str
    matrix: bool
    ceilings: dict[str, Any]
    input_sets: int
    compile_mode: str
    notes: tuple[str, ...] = field(default=())
    min_bytes_read: int | None = None        # of min_bytes, the reads (None: not split)
    floor_label: str = ""                    # which memory floor: "read 4.71 TB/s, write 4.45 TB/s, measured on ..."
    library_floor_s: float | None = None     # the floor of PyTorch's defaults (TF32 convolutions), where lower

    def timing(self, name: str) -> Timing | None:
        for t in self.timings:
            if t.name == name:
                return t
        return None

    def speedup(self, baseline: str, name: str = "candidate") -> float | None:
        a, b = self.timing(name), self.timing(baseline)
        if a is None or b is None or a.median_s <= 0:
            return None
        return b.median_s / a.median_s

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for t in self.timings:
            row = t.to_dict()
            row["time_over_floor"] = t.median_s / self.floor_s if self.floor_s > 0 else None
            row["pct_of_roofline"] = 100.0 * self.floor_s / t.median_s if t.median_s > 0 else None
            rows.append(row)
        return {
            "device_name": self.device_name, "torch_version": self.torch_version,
            "triton_version": self.triton_version, "date": self.date, "timings": rows,
            "floor_s": self.floor_s, "physics_floor_s": self.physics_floor_s, "physics_source": self.physics_source,
            "flops": self.flops, "min_bytes": self.min_bytes, "min_bytes_read": self.min_bytes_read,
            "floor_label": self.floor_label, "library_floor_s": self.library_floor_s,
            "dtype": self.dtype, "matrix": self.matrix,
            "ceilings": self.ceilings, "input_sets": self.input_sets, "compile_mode": self.compile_mode,
            "speedup_vs_eager": self.speedup("eager"), "speedup_vs_compile": self.speedup("compile"),
            "host": platform.node(), "notes": list(self.notes),
        }


def input_set_count(set_bytes: int, l2: int, most: int = 4) -> int:
    """How many input sets to rotate: one if a set is well past the L2, more while they would fit in it."""
    if set_bytes >= 2 * l2:
        return 1
    return most


def time_candidate(problem, candidate, reference, *, make_inputs: Callable[[int], list[Any]],
                   compile_mode: str = "default", tf32: bool = False, device=None,
                   budget_s: float = 2.0, precision: str = "ieee") -> TimingReport:
    """Time candidate vs eager vs torch.compile(reference) on the default variant; see the module docstring."""
    timings, input_sets, notes = time_functions(candidate, reference, make_inputs=make_inputs,
                                                compile_mode=compile_mode, tf32=tf32, device=device,
                                                budget_s=budget_s)
    return timing_report(problem, timings, input_sets, notes, compile_mode=compile_mode, tf32=tf32, device=device,
                         precision=precision)


def time_functions(candidate, reference, *, make_inputs: Callable[[int], list[Any]], compile_mode: str = "default",
                   tf32: bool = False, device=None, budget_s: float = 2.0) -> tuple[dict[str, Timing], int, list[str]]:
    """The stopwatch half of time_candidate: (timings of candidate, eager, compile; input sets; notes). The
    referee runs it in the candidate's process, where the candidate module lives, after the verdict."""
    import torch

    from kerntailor.measure.stopwatch import l2_bytes, measure

    device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    notes = []
    first = make_inputs(0)
    set_bytes = sum(x.numel() * x.element_size() for x in first if isinstance(x, torch.Tensor))
    sets = [first] + [make_inputs(i) for i in range(1, input_set_count(set_bytes, l2_bytes(device)))]
    fns: dict[str, Callable[[list[Any]], Any]] = {
        "candidate": lambda inp: candidate(*inp),
        "eager": lambda inp: reference(*inp),
    }
    # the baselines get the precision the candidate was allowed: tf32 matmuls and convolutions under --tf32,
    # PyTorch's defaults otherwise
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    if tf32:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        notes.append("baselines ran with tf32 allowed (torch.backends.cuda.matmul/cudnn.allow_tf32)")
    try:
        try:
            compiled = torch.compile(reference, mode=None if compile_mode == "default" else compile_mode)
            with torch.no_grad():
                compiled(*first)
            fns["compile"] = lambda inp: compiled(*inp)
        except Exception as e:  # a baseline that does not build is reported, not fatal
            notes.append(f"torch.compile baseline failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        timings = measure(fns, sets, device=device, budget_s=budget_s)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    return timings, len(sets), notes


def timing_report(problem, timings: dict[str, Timing], input_sets: int, notes: list[str], *,
                  compile_mode: str = "default", tf32: bool = False, device=None,
                  precision: str = "ieee") -> TimingReport:
    """The floors half of time_candidate: the measured ceilings, the problem's cost and the physics line around
    `timings` (candidate first). The referee's judge computes it, so that the floors never come from the
    candidate's process."""
    import torch
    import triton

    from kerntailor.measure.ceilings import load_ceilings
    from kerntailor.measure.cost import cost_with_source
    from kerntailor.measure.floor import floor_label, library_floor_s, local_target, physics_floor_s, roofline_floor_s

    device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    notes = list(notes)
    ceilings = load_ceilings(device)
    cost, cost_source = cost_with_source(problem, "default")
    floor = roofline_floor_s(cost, ceilings, tf32=tf32 or precision == "tf32", precision=precision)
    # the candidate's products follow the policy; the library's convolutions run on TF32 by PyTorch's default
    library = library_floor_s(cost, ceilings) if not tf32 and precision in ("ieee", "tf32x3") else None
    phys, source = physics_floor_s(cost, ceilings, local_target(ceilings.device_name), precision=precision)
    notes.append(f"FLOPs and bytes from {cost_source}")
    label = floor_label(cost, ceilings)
    if not ceilings.split:
        notes.append(f"floor: {label}")
    if not cost.flops:
        notes.append("no FLOPs counted: the floor counts bytes only")
    return TimingReport(
        device_name=torch.cuda.get_device_name(device), torch_version=torch.__version__,
        triton_version=triton.__version__, date=datetime.datetime.now().isoformat(timespec="seconds"),
        timings=tuple(timings[n] for n in timings), floor_s=floor, physics_floor_s=phys, physics_source=source,
        flops=cost.flops, min_bytes=cost.min_bytes, dtype=cost.dtype, matrix=cost.matrix,
        ceilings=ceilings.to_dict(), input_sets=input_sets, compile_mode=compile_mode, notes=tuple(notes),
        min_bytes_read=cost.read_bytes, floor_label=label,
        library_floor_s=library if library is not None and library < floor else None)
