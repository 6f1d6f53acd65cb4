"""Build many candidates in worker processes, each with a timeout; a hang or a crash costs one worker.

A ProcessPoolExecutor cannot cancel a running task, so the pool here is a few long-lived worker
processes (`python -m kerntailor.builder.worker`), each fed one job at a time over its stdin and
answering on its stdout. A worker that passes its job's deadline is killed and replaced (the job
gets "timeout after Ns"); one that dies gets "worker crashed (...)" with the last line it wrote;
the other jobs carry on. Workers stay warm between jobs, so the first-compile cost (starting Python,
importing triton and the backend, ~0.5 s) is paid once per worker, not once per candidate.

Workers are plain subprocesses rather than multiprocessing ones, so they never re-import the
caller's __main__ (a script without an `if __name__ == "__main__"` guard, a notebook), and they
start without TRITON_INTERPRET, under which Triton cannot compile.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path

from kerntailor.builder.cache import BuildCache
from kerntailor.builder.limits import check_limits, rule_occupancy
from kerntailor.builder.types import BuildResult, KernelSource
from kerntailor.targets.spec import Target

_START_ATTEMPTS = 3
_POLL_S = 0.5   # how often a wait wakes to check for workers that died silently


@dataclass
class _Worker:
    proc: subprocess.Popen
    jobs: Connection        # parent -> worker
    replies: Connection     # worker -> parent
    log_path: str
    tmp_dir: str                     # the worker's TMPDIR: removed with it, even if it was killed
    state: str = "starting"          # starting | idle | busy
    job: int | None = None
    deadline: float | None = None


@dataclass(frozen=True)
class _Job:
    kernel: KernelSource
    target: Target
    keep_asm: bool


class BuildPool:
    """Up to `workers` build processes; reuse one across calls (a search loop) and close() it after.

    `timeout_s` bounds each candidate's compile from the moment it is handed to a worker (None: no
    bound). Use as a context manager, or call close().
    """

    def __init__(self, workers: int | None = None, *, timeout_s: float | None = 120.0,
                 start_timeout_s: float = 120.0):
        self.max_workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self._workers: list[_Worker] = []
        self._tmp: str | None = None
        self._spawned = 0

    def __enter__(self) -> BuildPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def build(self, kernels: Sequence[KernelSource] | KernelSource, targets: Sequence[Target] | Target, *,
              allow_spills: bool = True, keep_asm: bool = False, cache: BuildCache | None = None
              ) -> list[BuildResult]:
        """Every kernel for every target, kernel-major: [k0@t0, k0@t1, ..., k1@t0, ...].

        Cache hits (when `cache` is given and keep_asm is False) skip compiling; fresh results that
        say something about the kernel (not timeouts, crashes or toolchain failures) are stored.
        """
        kernels = [kernels] if isinstance(kernels, KernelSource) else list(kernels)
        targets = [targets] if isinstance(targets, Target) else list(targets)
        jobs = [_Job(k, t, keep_asm) for k in kernels for t in targets]
        results: list[BuildResult | None] = [None] * len(jobs)
        todo = []
        for i, job in enumerate(jobs):
            hit = cache.get(job.kernel, job.target) if cache is not None and not keep_asm else None
            if hit is not None:
                results[i] = hit
            else:
                todo.append(i)
        for i, (result, cacheable) in self._run([jobs[i] for i in todo]).items():
            job = jobs[todo[i]]
            if cache is not None and cacheable:
                cache.put(job.kernel, job.target, result)
            results[todo[i]] = result
        return [finish(r, jobs[i].target, allow_spills=allow_spills) for i, r in enumerate(results)]

    def close(self) -> None:
        """Stop the workers: idle ones are asked to exit, busy ones (an interrupted build) are killed."""
        for w in self._workers:
            if w.state == "busy":
                self._kill(w)
                continue
            try:
                w.jobs.send(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            try:
                w.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self._kill(w)
        self._workers = []
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    # ---- the scheduler ----------------------------------------------------------------------------

    def _run(self, jobs: list[_Job]) -> dict[int, tuple[BuildResult, bool]]:
        done: dict[int, tuple[BuildResult, bool]] = {}
        queue = deque(range(len(jobs)))
        failed_starts = 0
        while queue or any(w.state == "busy" for w in self._workers):
            busy = sum(w.state == "busy" for w in self._workers)
            while len(self._workers) < min(self.max_workers, busy + len(queue)):
                self._spawn()
            for w in self._workers:
                if w.state == "idle" and queue:
                    self._dispatch(w, queue.popleft(), jobs, queue)
            self._wait()
            now = time.monotonic()
            for w in list(self._workers):
                message, dead = self._receive(w)
                if message is not None:
                    if message[0] == "ready":
                        w.state, w.deadline, failed_starts = "idle", None, 0
                    else:
                        index, result, cacheable = message
                        done[index] = (result, cacheable)
                        w.state, w.job, w.deadline = "idle", None, None
                if dead:
                    if w.state == "busy":
                        done[w.job] = (self._error(jobs[w.job], self._crash_reason(w)), False)
                    elif w.state == "starting":
                        failed_starts += 1
                    self._retire(w)
                elif w.deadline is not None and now > w.deadline:
                    if w.state == "busy":
                        error = f"timeout after {self.timeout_s:g}s"
                        done[w.job] = (self._error(jobs[w.job], error, self.timeout_s), False)
                    else:
                        failed_starts += 1
                    self._retire(w)
            if failed_starts >= _START_ATTEMPTS and not any(w.state != "starting" for w in self._workers):
                for i in queue:
                    done[i] = (self._error(jobs[i], "build worker failed to start"), False)
                queue.clear()
        return done

    def _spawn(self) -> None:
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="kerntailor-build-pool-")
        self._spawned += 1
        log_path = os.path.join(self._tmp, f"worker-{self._spawned}.log")
        tmp_dir = os.path.join(self._tmp, f"worker-{self._spawned}")
        os.mkdir(tmp_dir)
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        env["TMPDIR"] = tmp_dir   # the imported sources, ptxas files: gone with the worker, however it ends
        package_root = str(Path(__file__).resolve().parents[2])   # the directory holding kerntailor/
        env["PYTHONPATH"] = os.pathsep.join([package_root] + [p for p in [env.get("PYTHONPATH")] if p])
        tool_timeout = "none" if self.timeout_s is None else repr(float(self.timeout_s))
        with open(log_path, "w") as log:
            # its own session, so a kill takes its ptxas child with it (see _kill)
            proc = subprocess.Popen([sys.executable, "-m", "kerntailor.builder.worker", tool_timeout],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                    close_fds=True, start_new_session=True)
        jobs = Connection(os.dup(proc.stdin.fileno()), readable=False)
        replies = Connection(os.dup(proc.stdout.fileno()), writable=False)
        proc.stdin.close()
        proc.stdout.close()
        self._workers.append(_Worker(proc, jobs, replies, log_path, tmp_dir,
                                     deadline=time.monotonic() + self.start_timeout_s))

    def _dispatch(self, w: _Worker, index: int, jobs: list[_Job], queue: deque) -> None:
        job = jobs[index]
        try:
            w.jobs.send((index, job.kernel, job.target, job.keep_asm))
        except (OSError, ValueError):
            queue.appendleft(index)   # never started: give it to another worker
            self._retire(w)
            return
        w.state, w.job = "busy", index
        w.deadline = time.monotonic() + self.timeout_s if self.timeout_s is not None else None

    def _wait(self) -> None:
        deadlines = [w.deadline for w in self._workers if w.deadline is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else _POLL_S
        if self._workers:
            wait([w.replies for w in self._workers], min(timeout, _POLL_S))

    @staticmethod
    def _receive(w: _Worker):
        """(message or None, whether the worker is gone)."""
        try:
            if w.replies.poll():
                return w.replies.recv(), False
        except (EOFError, OSError):
            return None, True
        return None, w.proc.poll() is not None

    def _retire(self, w: _Worker) -> None:
        self._kill(w)
        self._workers.remove(w)
        shutil.rmtree(w.tmp_dir, ignore_errors=True)
        Path(w.log_path).unlink(missing_ok=True)

    @staticmethod
    def _kill(w: _Worker) -> None:
        """Kill the worker and anything it started (its process group, which it leads)."""
        if w.proc.poll() is None:   # still running, so its pid (= its group id) cannot have been reused
            try:
                os.killpg(w.proc.pid, signal.SIGKILL)
            except OSError:
                w.proc.kill()
        try:
            w.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for conn in (w.jobs, w.replies):
            try:
                conn.close()
            except OSError:
                pass

    @staticmethod
    def _crash_reason(w: _Worker) -> str:
        try:
            code = w.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        last = ""
        try:
            with open(w.log_path, errors="replace") as f:
                lines = [ln.strip() for ln in f.read()[-4000:].splitlines() if ln.strip()]
            last = lines[-1][:200] if lines else ""
        except OSError:
            pass
        return f"worker crashed ({how})" + (f": {last}" if last else "")

    @staticmethod
    def _error(job: _Job, error: str, seconds: float = 0.0) -> BuildResult:
        return BuildResult(key=job.kernel.key(), target=job.target.name, ok=False, error=error, seconds=seconds)


def finish(result: BuildResult, target: Target, *, allow_spills: bool = True) -> BuildResult:
    """Fill what depends on settings and the targets table: occupancy_rule and rejected_reason."""
    if not result.ok or result.facts is None:
        return result
    occupancy, limited_by = rule_occupancy(result.facts, target)
    facts = replace(result.facts, occupancy_rule=occupancy, occupancy_limited_by=limited_by)
    return replace(result, facts=facts, rejected_reason=check_limits(facts, target, allow_spills=allow_spills))


def build_many(kernels: Sequence[KernelSource] | KernelSource, targets: Sequence[Target] | Target, *,
               workers: int | None = None, timeout_s: float | None = 120.0, allow_spills: bool = True,
               keep_asm: bool = False, cache_dir: str | os.PathLike | None = None, use_cache: bool = True
               ) -> list[BuildResult]:
    """Build every kernel for every target in `workers` processes (default: the CPU count).

    Results are kernel-major ([k0@t0, k0@t1, ..., k1@t0, ...]), one per pair, never None. A
    candidate that runs past `timeout_s` gives ok=False, error "timeout after Ns"; one that kills
    its worker gives "worker crashed (...)"; the rest carry on. The cache lives in `cache_dir`
    (default: `default_cache_dir()`); use_cache=False bypasses it.
    """
    cache = BuildCache(cache_dir) if use_cache else None
    with BuildPool(workers, timeout_s=timeout_s) as pool:
        return pool.build(kernels, targets, allow_spills=allow_spills, keep_asm=keep_asm, cache=cache)


def cross_compile(kernel: KernelSource, target: Target, timeout_s: float | None = 120.0, *,
                  allow_spills: bool = True, keep_asm: bool = False,
                  cache_dir: str | os.PathLike | None = None, use_cache: bool = True) -> BuildResult:
    """Build one kernel for one target and read its ISA facts.

    With a timeout (the default) it runs in a fresh worker process, so a hang or crash cannot take
    the caller down; that costs about half a second of start-up. timeout_s=None compiles in this
    process (unless it runs Triton's interpreter, which cannot compile: then in a worker with no
    timeout). For many candidates use build_many or a BuildPool, which keep workers warm.
    """
    from kerntailor.builder.compile import compile_here, interpreter_mode

    if timeout_s is not None or interpreter_mode():
        return build_many([kernel], [target], workers=1, timeout_s=timeout_s, allow_spills=allow_spills,
                          keep_asm=keep_asm, cache_dir=cache_dir, use_cache=use_cache)[0]
    cache = BuildCache(cache_dir) if use_cache else None
    result = cache.get(kernel, target) if cache is not None and not keep_asm else None
    if result is None:
        result, cacheable = compile_here(kernel, target, keep_asm=keep_asm)
        if cache is not None and cacheable:
            cache.put(kernel, target, result)
    return finish(result, target, allow_spills=allow_spills)
