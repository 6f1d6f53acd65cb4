"""What the stages of one template `generate` run share: the settings, the target and whether it is the GPU
here (measured) or not (predicted), the problem and, once captured, its graph, plan and floor; the store."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kerntailor.codegen import EmittedModule, KernelMemo, Schedule, generate_module
from kerntailor.problem import ProblemSpec
from kerntailor.targets import Target

# progress(stage, done, total, best seconds[, detail]): detail, a line on where inside the stage the work is (the
# referee's case: verify_watch), is passed by the stages that have one; every Progress takes it
Progress = Callable[..., None]


def verify_watch(progress: Progress, stage: str = "verify"):
    """A referee watch (verify.referee.Watch) that reports the judgement as stage "verify": cases judged of the
    cases planned, and the detail of where the judge is (variant, draw, step; a wait for the GPU's lock; a new
    judgement after the referee ran out of GPU memory), so a run cut in its judgement says where. `stage`: "verify
    library" for the library path's own judgement."""
    count = {"done": 0, "total": 1}

    def watch(e: dict) -> None:
        kind = e.get("event")
        if kind == "cases":
            count["total"] = max(1, int(e.get("total") or 0))
            return
        if kind == "case":
            count["done"] += 1
        elif kind == "edge_skipped":   # a case the judge could not run here, with those it then did not run
            count["done"] += max(1, int(e.get("cases") or 1))
        where = ", ".join(f"{k} {e[k]}" for k in ("variant", "draw", "step") if e.get(k))
        detail = {"progress": where, "case": f"judged {where}", "lock_wait": "waiting for the GPU's lock",
                  "lock_held": "holds the GPU's lock", "edge_skipped": f"skipped {str(e.get('reason'))[:120]}",
                  "retry": f"judged again after {e.get('wait_s')} s: the referee ran out of GPU memory"}.get(kind)
        progress(stage, min(count["done"], count["total"]), count["total"], None, detail)
    return watch


@dataclass
class Run:
    settings: object                  # GenerateSettings
    target: Target
    problem: ProblemSpec
    local: Target | None              # the GPU in this machine, if any
    out: Path
    progress: Progress
    started: float = field(default_factory=time.monotonic)
    store: object = None              # Store, or None with --no-store
    run_id: int | None = None
    pkey: object = None
    toolchain: object = None
    capture: object = None            # set by the capture stage
    gen: object = None
    plan: object = None
    floor: object = None
    baselines: object = None          # predicted mode: costmodel.baselines.PredictedBaselines (or the error, a str)
    library_groups: dict = field(default_factory=dict)   # library group -> why ("conv: no generator")
    library_ops: frozenset = frozenset()                 # the operators their calls dispatch to (library_ops.py)
    outpaced: dict = field(default_factory=dict)         # conv node -> Outpaced: the library's rate wins (outpaced.py)
    library_anchors: dict = field(default_factory=dict)  # of those, the anchors planned as library calls -> why
    abandon_if_lost: frozenset = frozenset()  # groups whose search, far behind eager, ends this pass (FirstPassLost)
    stage_s: dict = field(default_factory=dict)          # wall seconds per stage (timed), for the report
    memo: KernelMemo | None = None                       # the kernels written for `gen` so far (module())

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the wall time of the block to `stage_s[stage]` (the report's "stage_s": where a slow run went)."""
        t = time.monotonic()
        try:
            yield
        finally:
            self.stage_s[stage] = round(self.stage_s.get(stage, 0.0) + time.monotonic() - t, 3)

    @property
    def measured(self) -> bool:
        """Whether the target is the GPU here: candidates are timed on it."""
        return self.local is not None and self.local.name == self.target.name

    @property
    def mode(self) -> str:
        return "measured" if self.measured else "predicted"

    @property
    def kernel_path(self) -> Path:
        return self.out / "kernel.py"

    @property
    def report_path(self) -> Path:
        return self.out / "report.json"

    def module(self, schedules: Mapping[str, Schedule], notes: list[str] | None = None) -> EmittedModule:
        """kernel.py of the captured problem with each group under `schedules[group]`; a kernel written before
        (the same group under the same schedule) is reused: the search writes a module for every candidate."""
        if self.memo is None or self.memo.gen is not self.gen:
            self.memo = KernelMemo(self.gen)
        return generate_module(self.problem, self.gen, self.plan, schedules, self.target.name, self.target.arch,
                               notes, self.memo)
