"""Evaluate candidate schedules of one fusion group: predicted (cross-compile + cost model) or measured.

Both return search Trials (seconds, lower is better) and keep what they learned (ISA facts, errors) for
the report and the store. Measured mode times whole candidate modules in a GPU worker process (gpu_bench.py), so a
kernel that crashes or hangs costs its batch a timeout, never the search. The worker serves every batch of a search
(GpuWorker); the pipeline closes it when the search ends, before the referee needs the GPU's memory.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kerntailor.builder import BuildCache, BuildPool, BuildResult, KernelSource
from kerntailor.costmodel import AnalyticalModel, Candidate, Work
from kerntailor.search.config import Config
from kerntailor.search.strategy import Trial
from kerntailor.targets import Target

log = logging.getLogger(__name__)


@dataclass
class Evaluation:
    """What one candidate taught us."""

    config: Config
    source: str
    kernel: KernelSource | None = None
    build: BuildResult | None = None
    seconds: float | None = None
    label: str = "predicted"
    error: str = ""


@dataclass
class Evaluator:
    """Turns configs of one group into Trials; `materialize(config)` gives (module source, KernelSource). Why a
    config failed is its Trial's error and a log line (`kerntailor.generate.evaluate`, INFO)."""

    target: Target
    work: Work
    materialize: object
    measured: bool = False
    problem_path: str = ""
    dtype: str | None = None
    precision: str = "ieee"        # fp8: the sanity filter's bound allows fp8's own error (gpu_bench.py)
    timeout_s: float = 120.0       # one batch in the GPU worker: a hang costs this, never the search
    seen: dict[Config, Evaluation] = field(default_factory=dict)
    group: str = ""                # the fusion group's name, for the log
    time_eager: bool = False       # measured: the worker also times the reference (its first batch), into eager_s
    eager_s: float | None = None

    def __call__(self, configs: list[Config]) -> list[Trial]:
        evals = []
        for config in configs:
            try:
                source, kernel = self.materialize(config)
                evals.append(Evaluation(config, source, kernel))
            except Exception as e:  # a config the generator cannot realise
                evals.append(Evaluation(config, "", error=f"codegen: {e}"))
        ready = [e for e in evals if e.kernel is not None]
        built = BUILDS.build([e.kernel for e in ready], [self.target], cache=BuildCache()) if ready else []
        for e, result in zip(ready, built):
            e.build = result
            if not result.ok:
                e.error = f"build: {result.error}"
            elif result.rejected_reason:
                e.error = f"limits: {result.rejected_reason}"
        usable = [e for e in evals if not e.error]
        if self.measured:
            self.measure(usable)
        else:
            model = AnalyticalModel(self.target)
            for e in usable:
                facts = e.build.facts if e.build is not None else None   # a library group builds nothing
                e.seconds = model.predict([Candidate(e.config, self.work, facts=facts)])[0]
                e.label = "predicted"
        trials = []
        who = f"{self.group}: " if self.group else ""
        for e in evals:
            self.seen[e.config] = e
            ok = e.seconds is not None and not e.error
            if ok:
                log.debug("%s%s: %.2f us (%s)", who, e.config.key(), e.seconds * 1e6, e.label)
            else:   # why a candidate was dropped: codegen, build, limits, or the GPU worker's check
                log.info("%sdropped %s: %s", who, e.config.key(), e.error or "no time")
            trials.append(Trial(e.config, ok, e.seconds if ok else None, e.error))
        return trials

    def measure(self, evals: list[Evaluation]) -> None:
        """Time whole candidate modules (their `source`) in the GPU worker; fills seconds / error."""
        if not evals:
            return
        with tempfile.TemporaryDirectory(prefix="kt-bench-") as tmp:
            paths = []
            for i, e in enumerate(evals):
                p = Path(tmp) / f"cand{i}.py"
                p.write_text(e.source)
                paths.append(str(p))
            out = Path(tmp) / "out.jsonl"
            request = {"problem": self.problem_path, "dtype": self.dtype, "candidates": paths,
                       "precision": self.precision, "time_eager": self.time_eager and self.eager_s is None}
            began = time.monotonic()
            crashed = WORKER.run(request, out, self.timeout_s)
            records, setup = {}, None
            if out.exists():
                for line in out.read_text().splitlines():
                    r = json.loads(line)
                    if "path" in r:
                        records[r["path"]] = r
                    elif "eager_median_s" in r:
                        self.eager_s = r["eager_median_s"]
                    elif "setup_s" in r:
                        setup = r["setup_s"]
            log.info("%s", batch_line(self.group, len(paths), time.monotonic() - began, setup, records.values()))
            for path, e in zip(paths, evals):
                r = records.get(path)
                if r is None:
                    e.error = f"gpu worker died before timing it{': ' + crashed if crashed else ''}"
                elif not r["ok"]:
                    e.error = r["error"]
                else:
                    e.seconds, e.label = r["median_s"], "measured"


def batch_line(group: str, count: int, wall_s: float, setup_s: float | None, records) -> str:
    """Where one GPU worker batch's seconds went: the worker's start and set-up (import, load the problem, build the
    reference, run it), each candidate's build and first run (Triton compiles its kernels there), and the timing."""
    first = sum(r.get("first_s") or 0.0 for r in records)
    timing = sum(r.get("timing_s") or 0.0 for r in records)
    parts = [f"set-up {setup_s:.1f} s" if setup_s is not None else "no set-up record",
             f"builds and first runs {first:.1f} s", f"timing {timing:.1f} s"]
    if setup_s is not None:
        parts.append(f"the rest (process start, imports before set-up, exit) {wall_s - setup_s - first - timing:.1f} s")
    return f"{group + ': ' if group else ''}GPU worker batch of {count}: {wall_s:.1f} s ({', '.join(parts)})"


class GpuWorker:
    """The measured search's worker process (`python -m kerntailor.generate.gpu_bench --serve`), started at the
    first batch and kept while batches ask for the same problem, dtype and precision: its set-up (torch, CUDA, the
    problem, the reference and its output) took ~15 s a batch on the H200 when each batch had a process of its own
    (2026-12-04e call 3: LeNet5's 7 groups, 12 batches, 2 of its 3 minutes). A batch that runs past its timeout
    kills it (the next batch starts another); one that leaves the device unusable ends it (gpu_bench.serve).
    KERNTAILOR_GPU_WORKER=batch gives each batch a process of its own, as before."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.key: tuple | None = None

    def run(self, job: dict, out: Path, timeout_s: float) -> str:
        """Run one batch, its records appended to `out`; "" when it ended, else why not (a timeout)."""
        if os.environ.get("KERNTAILOR_GPU_WORKER") == "batch":
            return _one_process(job, out, timeout_s)
        key = (job["problem"], job.get("dtype"), job.get("precision"))
        if self.proc is None or self.proc.poll() is not None or self.key != key:
            self.close()
            self.proc = subprocess.Popen([sys.executable, "-m", "kerntailor.generate.gpu_bench", "--serve"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
            self.key = key
        try:
            self.proc.stdin.write(json.dumps({**job, "out": str(out)}) + "\n")
            self.proc.stdin.flush()
        except OSError:   # it died between batches: its records say so (none)
            self.close()
            return ""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            self.close()
            return f"timeout after {timeout_s:.0f}s"
        if self.proc.stdout.readline().strip() != "done":   # it died mid-batch: the records it wrote stand
            self.close()
        return ""

    def close(self) -> None:
        proc, self.proc, self.key = self.proc, None, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


def _one_process(job: dict, out: Path, timeout_s: float) -> str:
    path = out.with_name("job.json")
    path.write_text(json.dumps(job))
    try:
        subprocess.run([sys.executable, "-m", "kerntailor.generate.gpu_bench", str(path), str(out)],
                       timeout=timeout_s, capture_output=True)
        return ""
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout_s:.0f}s"


WORKER = GpuWorker()
atexit.register(WORKER.close)
# the search's build workers, warm across its batches (a candidate that hangs or crashes costs one worker, as
# before). A pool per batch started them again for every group, each importing triton and, at its first
# candidate module, torch: 15_DenseNet121's 131 groups paid that 131 times over
BUILDS = BuildPool(timeout_s=120)
atexit.register(BUILDS.close)


def close_gpu_worker() -> None:
    """End the measured search's worker (its GPU memory freed) and the search's build workers: the pipeline calls
    it when its searches end. A later search starts them again."""
    WORKER.close()
    BUILDS.close()
