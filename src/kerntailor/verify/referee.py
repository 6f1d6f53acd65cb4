"""verify_candidate: judge a candidate file (defining ModelNew) against a problem's reference Model.

The CLI side of the referee. It reads and statically checks the candidate's source (it never imports it),
picks the mode and the variants, then starts the judge (judge.py) through the launcher (launch.py) under a
time limit, with an environment scrubbed of credentials (sandbox.py), and reads the judge's events from a
pipe: a crash, an illegal memory access or a hang becomes a failed Verdict with its reason, never a dead
tool. Whatever ends this process (a verdict, Ctrl-C, SIGTERM, SIGKILL) ends the judge and the candidate's
processes with it. Files that cannot be loaded at all (problem or candidate) raise ProblemError /
CandidateError instead (exit code 2 in the CLI).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import os
import pickle
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kerntailor.errors import CandidateError, ProblemError
from kerntailor.verify import launch
from kerntailor.verify.draws import draw_names
from kerntailor.verify.link import INPUTS_NOT_ALLOCATED
from kerntailor.verify.static import parse_candidate, problem_imports, static_check
from kerntailor.verify.tolerance import TOLERANCES
from kerntailor.verify.verdict import CHECKS, CaseResult, Verdict, VerifySettings

INTERPRETER_MAX_NUMEL = 1 << 16   # the interpreter runs variants whose largest input has at most this many elements
POLL_S = 0.05


def _gpu_available() -> bool:
    import torch

    return torch.cuda.is_available()


def choose_mode(settings: VerifySettings) -> tuple[str, bool]:
    """(device, interpreter): "cuda:0" on a GPU machine, else "cpu" under TRITON_INTERPRET=1."""
    if settings.device == "cpu" or (settings.device == "auto" and not _gpu_available()):
        return "cpu", True
    if settings.device not in ("auto", "cuda") and not settings.device.startswith("cuda"):
        raise CandidateError(f"unknown device {settings.device!r}: use auto, cuda or cpu")
    if not _gpu_available():
        raise CandidateError("--device cuda asked for, but torch sees no GPU on this machine")
    return ("cuda:0" if settings.device in ("auto", "cuda") else settings.device), False


def _largest_numel(problem, variant: str) -> int:
    import torch

    inputs = problem.make_inputs(variant, "meta")
    return max((x.numel() for x in inputs if isinstance(x, torch.Tensor)), default=0)


def choose_variants(problem, settings: VerifySettings, interpreter: bool) -> tuple[list[str], list[str]]:
    """(variants to run, variants skipped with why). GPU: all. Interpreter: those small enough."""
    names = [v.name for v in problem.variants]
    if settings.variants:
        unknown = [v for v in settings.variants if v not in names]
        if unknown:
            raise ProblemError(f"{problem.name}: no variant {unknown[0]!r} (known: {', '.join(names)})")
        names = list(settings.variants)
    if not interpreter:
        return names, []
    sizes = {n: _largest_numel(problem, n) for n in names}
    run = [n for n in names if sizes[n] <= INTERPRETER_MAX_NUMEL]
    if not run:
        smallest = min(names, key=lambda n: sizes[n])
        run = [smallest]
    skipped = [f"{n} (largest input {sizes[n]:,} elements: too big for the interpreter)"
               for n in names if n not in run]
    return run, skipped


def special_variant(problem, variants: list[str]) -> str | None:
    """The variant the special-values draw runs on: the smallest judged (its largest input), the first on a tie.
    One extra case per verification: about a third more referee time under the interpreter (3 draws on each of
    its variants), less on the GPU, where the default shape's cases dominate. The memory plan budgets its draw
    on that variant (measure/memory.py holds the rule)."""
    from kerntailor.measure.memory import special_variant as smallest

    return smallest(problem, variants)


def _tolerance_text(tf32: bool, precision: str = "ieee", fp8_format: str | None = None) -> str:
    """The table rows in use, one line; under fp8 what the reference emulates (the format once the worker
    has read the candidate's FP8_FORMAT)."""
    from kerntailor.precision import is_fp8

    fp8 = is_fp8(precision)
    rows = ["tf32", "bf16", "fp16"] if tf32 and not fp8 else ["fp32", "bf16", "fp16"]
    text = "; ".join(f"{r}: norm ≤ {TOLERANCES[r].norm:g}, |Δ| ≤ {TOLERANCES[r].atol:g}·rms + "
                     f"{TOLERANCES[r].rtol:g}·|ref|" for r in rows)
    if not fp8:
        return text
    scales = "per row of A and column of B" if precision == "fp8-row" else "one per operand"
    fmt = f"{fp8_format}, " if fp8_format else ""
    return (f"{precision}: judged against the float64 reference with fp8-quantized products ({fmt}power-of-two "
            f"scales {scales}), by the output dtype's row, never widened: {text}")


def _judge_env() -> dict[str, str]:
    """The judge's environment: the allow-list (no API key, token or credential), HOME and the caches, and
    PYTHONPATH with this kerntailor first."""
    from kerntailor.verify.sandbox import scrubbed_env

    env = scrubbed_env(judge=True)
    env.pop("TRITON_INTERPRET", None)
    src = str(Path(__file__).resolve().parents[2])  # the folder holding the kerntailor package
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _EventReader:
    """The judge's events, read from a pipe as they come (a line cut by a crash is dropped)."""

    MAX_BYTES = 256 << 20

    def __init__(self, fd: int):
        self.fd, self.buf, self.events, self.total = fd, b"", [], 0

    def pump(self, timeout: float) -> bool:
        """Read what is there within `timeout`; False once the writer is gone."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            return False
        self.total += len(chunk)
        if self.total > self.MAX_BYTES:
            return False
        self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(event, dict):
                event[ARRIVED] = time.monotonic()   # stamped here, not by the judge: phase_seconds
            self.events.append(event)
        return True


ARRIVED = "_arrived"   # the key under which _EventReader stamps each event with this process's monotonic clock


LONG_WAIT_S = 5.0   # a wait for the GPU's lock past this names its holder in phase_seconds


def phase_seconds(events: list[dict], started: float, ended: float) -> dict[str, float]:
    """Where the judge's wall time went, from the arrival times of its events: "start" (spawning the judge and
    the candidate, imports, loading) until the first progress event, then each progress step ("construct",
    "reference", "run", "timing"; "run 3" counts as "run"), and "gpu lock wait" from a lock_wait to its
    lock_held (parallel jobs queued at the GPU's lock); a wait of LONG_WAIT_S or more is also counted under
    "gpu lock wait behind <the holder's note when it began>" (those keys overlap "gpu lock wait": not to be summed
    with it). A report figure, not a check: it shows whether a slow
    judgement is the work, the queue or the start."""
    seconds: dict[str, float] = {}
    phase, before_wait, at = "start", None, started
    waited_from, behind = 0.0, ""   # a wait's start and the lock's holder then (measure/gpulock.py's note)
    for e in events:
        t = e.get(ARRIVED) if isinstance(e, dict) else None
        if t is None:
            continue
        seconds[phase] = seconds.get(phase, 0.0) + max(0.0, t - at)
        at = t
        if e.get("event") == "lock_wait" and before_wait is None:
            before_wait, phase = phase, "gpu lock wait"
            waited_from, behind = t, str(e.get("holder") or "")[:200]
        elif e.get("event") == "lock_held" and before_wait is not None:
            phase, before_wait = before_wait, None
            if behind and t - waited_from >= LONG_WAIT_S:   # who held it, for the waits worth reading
                key = f"gpu lock wait behind {behind}"
                seconds[key] = seconds.get(key, 0.0) + t - waited_from
        elif e.get("event") == "progress" and e.get("step"):
            step = str(e["step"]).split()[0]
            if before_wait is None:
                phase = step
            else:
                before_wait = step
    seconds[phase] = seconds.get(phase, 0.0) + max(0.0, ended - at)
    return {k: round(v, 3) for k, v in seconds.items()}


LOCK_WAIT_MAX_S = 1800.0   # the longest wait for the GPU's lock that does not count against the judge's time


class Deadline:
    """The judge's time limit, less the time it waits for the GPU's lock (measure/gpulock.py).

    Parallel jobs on one GPU (`bench --jobs N`, the cheaters' fixture) take turns at the lock: a judge queued
    behind another job's correctness work or timing is not the candidate hanging, and counting that wait gave
    correct candidates "no answer within 120 s (construct)" on the H200 (2026-12-02, four judges at once). The
    judge says when it starts to wait ("lock_wait") and when it holds the lock ("lock_held"); the wait moves the
    deadline, up to LOCK_WAIT_MAX_S in all. The events come from the judge process (ours), never from the
    candidate's: a candidate that holds the lock through the judge (its timing) is charged its time as before."""

    def __init__(self, limit_s: float, now: float, max_wait_s: float = LOCK_WAIT_MAX_S):
        self.at, self.waiting_since, self.waited, self.max_wait, self.seen = now + limit_s, None, 0.0, max_wait_s, 0

    def observe(self, events: list[dict], now: float) -> None:
        """Account the lock events that arrived since the last call."""
        for e in events[self.seen:]:
            if e.get("event") == "lock_wait" and self.waiting_since is None:
                self.waiting_since = now
            elif e.get("event") == "lock_held" and self.waiting_since is not None:
                self._credit(now)
        self.seen = len(events)

    def _credit(self, now: float) -> None:
        wait = min(now - self.waiting_since, max(0.0, self.max_wait - self.waited))
        self.at += wait
        self.waited += wait
        self.waiting_since = None

    def expired(self, now: float) -> bool:
        if self.waiting_since is not None:   # queued at the lock: only the cap on waiting ends it
            return self.waited + (now - self.waiting_since) > self.max_wait and now > self.at
        return now > self.at

    def extend(self, seconds: float) -> None:
        self.at += seconds


Watch = Callable[[dict], None]   # called with each WATCHED event of the judge as it arrives (verify_candidate)
WATCHED = ("cases", "progress", "case", "lock_wait", "lock_held", "edge_skipped", "retry")


def _tell(watch: Watch | None, events: list[dict], seen: int) -> int:
    """Pass the WATCHED events after the first `seen` to `watch` (whose failure never touches the verdict);
    returns how many events have been seen."""
    if watch is not None:
        for e in events[seen:]:
            if e.get("event") in WATCHED:
                with contextlib.suppress(Exception):
                    watch(e)
    return len(events)


def run_judge(job: dict[str, Any], spawn: dict[str, Any], settings: VerifySettings,
              watch: Watch | None = None) -> tuple[list[dict], str, str]:
    """Run the judge; returns (events, how it ended: "ok" | "timeout" | "signal N" | "exit N", last log lines).
    `watch` sees the judge's progress as it comes (Watch).

    However this function is left (a verdict, a timeout, KeyboardInterrupt), the launcher's process group is
    killed; if this process dies instead, the launcher and the judge die with it (launch.py)."""
    with tempfile.TemporaryDirectory(prefix="kerntailor-verify-") as tmp:
        job_dir = Path(tmp)
        (job_dir / "job.pkl").write_bytes(pickle.dumps(job))
        (job_dir / "job.json").write_text(json.dumps(spawn))
        log_path = job_dir / "judge.log"
        events_r, events_w = os.pipe()
        reader = _EventReader(events_r)
        proc = None
        ended = "ok"
        try:
            with open(log_path, "wb") as log:
                proc = launch.start([sys.executable, "-m", "kerntailor.verify.judge", str(job_dir), str(events_w)],
                                    env=_judge_env(), log=log, pass_fds=(events_w,))
            os.close(events_w)
            events_w = -1
            deadline = Deadline(settings.timeout_s, time.monotonic())
            seen = 0
            extended = False
            open_pipe = True
            while True:
                if open_pipe:
                    open_pipe = reader.pump(POLL_S)
                elif proc.poll() is None:
                    time.sleep(POLL_S)
                if proc.poll() is not None and not open_pipe:
                    break
                deadline.observe(reader.events, time.monotonic())
                seen = _tell(watch, reader.events, seen)
                if deadline.expired(time.monotonic()):
                    # the timing phase (torch.compile, many runs) gets its own allowance, once
                    if not extended and any(e.get("step") == "timing" for e in reader.events):
                        deadline.extend(settings.time_timeout_s)
                        extended = True
                        continue
                    ended = "timeout"
                    break
            if ended == "ok" and proc.returncode:
                ended = launch.exit_description(proc.returncode)
        finally:
            if proc is not None:
                launch.stop(proc)
            if events_w >= 0:
                os.close(events_w)
            os.close(events_r)
        tail = log_path.read_text(errors="replace").strip().splitlines()[-20:] if log_path.exists() else []
    return reader.events, ended, "\n".join(tail)


def _where(events: list[dict]) -> str:
    for e in reversed(events):
        if e.get("event") == "progress":
            parts = [f"variant {e['variant']}" if e.get("variant") else "",
                     f"draw {e['draw']}" if e.get("draw") else "", e.get("step", "")]
            return ", ".join(p for p in parts if p)
    return "loading the candidate"


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def verify_candidate(problem, candidate_path: str | Path, settings: VerifySettings | None = None, *,
                     watch: Watch | None = None) -> Verdict:
    """Judge `candidate_path` (a file defining ModelNew) against `problem` (a ProblemSpec or a problem file).

    Returns a Verdict (passed, or the failed check with a one-line reason). Raises ProblemError or
    CandidateError when a file cannot be loaded at all. `watch`, if given, is told how many cases the judgement
    has ({"event": "cases", "total": N}), then sees the judge's events as they come (WATCHED) and each new
    judgement after the referee ran out of GPU memory ({"event": "retry", "wait_s": S}).
    """
    return _verify(problem, candidate_path, settings, static=True, watch=watch)


def verify_dynamic(problem, candidate_path: str | Path, settings: VerifySettings | None = None) -> Verdict:
    """The dynamic checks alone, with the static check skipped: how the judge and the sandbox hold against a
    candidate that the static check would stop first (the adversarial tests use it). Not a way to judge a
    kernel: a kernel's verdict is verify_candidate's."""
    return _verify(problem, candidate_path, settings, static=False)


def _verify(problem, candidate_path: str | Path, settings: VerifySettings | None, static: bool,
            watch: Watch | None = None) -> Verdict:
    from kerntailor.problem import ProblemSpec, load_problem

    started = time.monotonic()
    settings = settings or VerifySettings()
    if settings.draws < 3:
        raise CandidateError(f"draws must be at least 3 (got {settings.draws})")
    if not isinstance(problem, ProblemSpec):
        problem = load_problem(problem)
    candidate_path = Path(candidate_path)
    source, tree = parse_candidate(candidate_path)
    device, interpreter = choose_mode(settings)
    variants, skipped = choose_variants(problem, settings, interpreter)
    plan = memory_plan(problem, variants, interpreter)   # a problem that cannot fit: refused here, before any work
    mode = "cpu interpreter" if interpreter else f"gpu {device}"
    base = dict(problem=problem.name, candidate=str(candidate_path), mode=mode,
                tolerance=_tolerance_text(settings.tf32, settings.precision))

    library_off = settings.allow_library or settings.library_path
    findings = static_check(source, tree, allow_library=library_off, problem_stem=problem.path.stem,
                            library_path=settings.library_path, allowed_calls=settings.allowed_calls,
                            tensor_args=[spec.shape is not None for spec in problem.inputs],
                            reference_imports=problem_imports(problem.source)) if static else []
    if findings:
        more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
        return Verdict(False, "static", findings[0].one_line() + more, checks=("static",),
                       notes=tuple(f.one_line() for f in findings), wall_s=time.monotonic() - started, **base)

    return _judge_dynamic(problem, candidate_path, tree, settings, device, interpreter, variants, skipped, base,
                          started, plan, watch)


def memory_plan(problem, variants: list[str], interpreter: bool):
    """Where the referee keeps the float64 reference (measure/memory.referee_plan) for these variants on the
    GPU, or on the host under the interpreter; MemoryRefused (one line, exit 2) when it cannot fit. None where
    the meta device cannot run the problem (the judge then says what fails)."""
    from kerntailor.measure.memory import MemoryRefused, referee_plan

    try:
        return referee_plan(problem, variants, gpu=not interpreter)
    except MemoryRefused:
        raise
    except Exception:   # noqa: BLE001 - no estimate: the judge runs as it always did, and reports what fails
        return None


def fits_referee(problem, settings: VerifySettings | None = None) -> None:
    """MemoryRefused (one line) if the referee could not judge `problem` here, in the mode and on the variants
    `settings` (default: generate's) give; nothing is allocated (memory_plan)."""
    settings = settings or VerifySettings()
    device, interpreter = choose_mode(settings)
    memory_plan(problem, choose_variants(problem, settings, interpreter)[0], interpreter)


def _judge_dynamic(problem, candidate_path: Path, tree: ast.Module, settings: VerifySettings, device: str,
                   interpreter: bool, variants: list[str], skipped: list[str], base: dict, started: float,
                   plan=None, watch: Watch | None = None) -> Verdict:
    """The dynamic checks, in the judge and the sandboxed candidate process (after the static check)."""
    observe = None if settings.allow_library or settings.library_path else sorted(settings.allowed_ops)
    edges, edges_skipped = plan_edge_cases(problem, variants, settings, interpreter)
    spawn = dict(candidate=str(candidate_path.resolve()), device=device, interpreter=interpreter,
                 allowed_ops=observe, timeout_s=settings.timeout_s, time_timeout_s=settings.time_timeout_s)
    job = dict(problem=problem, variants=variants, draws=list(draw_names(settings.draws)), seed=settings.seed,
               special=special_variant(problem, variants) if settings.special else None,
               device=device, interpreter=interpreter, tf32=settings.tf32, time=settings.time and not interpreter,
               compile_mode=settings.compile_mode, precision=settings.precision, fp8_format=fp8_format_of(tree),
               memory=plan.to_job() if plan is not None else None, edges=edges)
    notes: list[str] = []
    cases = len(variants) * len(job["draws"]) + (job["special"] is not None) + len(edges)
    _tell(watch, [{"event": "cases", "total": cases}], 0)
    for wait_s in (*OOM_RETRY_WAITS_S, None):
        judge_started = time.monotonic()
        events, ended, log_tail = run_judge(job, spawn, settings, watch)
        while (lost := next((e for e in events if e.get("event") == "edge_lost"), None)) is not None:
            # PyTorch's reference broke the judge's GPU context at an edge case (judge_edges.ContextLost): no
            # finding about the candidate; judged again without that case, which is reported skipped
            index = lost.get("index")
            if not isinstance(index, int) or not 0 <= index < len(job["edges"]):
                break
            edges_skipped = [*edges_skipped, str(lost.get("reason", "an edge case: the reference broke the GPU"))]
            job["edges"] = [e for i, e in enumerate(job["edges"]) if i != index]
            events, ended, log_tail = run_judge(job, spawn, settings, watch)
        phases = {**base, "phase_s": phase_seconds(events, judge_started, time.monotonic())}
        verdict = assemble(events, ended, log_tail, phases, variants, skipped, settings, interpreter,
                           time.monotonic() - started, edges_skipped)
        if wait_s is None or interpreter or not _referee_out_of_memory(verdict):
            break
        # the referee's own processes ran out of GPU memory (another process's allocations beside its plan):
        # no finding about the candidate, so it is judged again once the others have had time to let go
        notes.append(f"judged again after {wait_s:g} s: the referee ran out of GPU memory ({verdict.reason[:160]})")
        _tell(watch, [{"event": "retry", "wait_s": wait_s}], 0)
        time.sleep(wait_s)
    return dataclasses.replace(verdict, notes=(*verdict.notes, *notes)) if notes else verdict


OOM_RETRY_WAITS_S = (15.0, 45.0)   # seconds before each new judgement after the referee ran out of GPU memory


def _referee_out_of_memory(verdict: Verdict) -> bool:
    """Whether `verdict` is the referee's own failure to hold its tensors on the GPU (check "referee": the judge
    or the candidate process's server, never the candidate's forward, which fails check "exception"), or the
    candidate process's failure to allocate the inputs the judge ships it (check "crash", link.py: memory the
    referee's plan counted, taken by another job; 43_Max_Pooling_3D fp32 on the H200, 2026-12-03). A candidate
    that hoards memory to cause it only earns a later judgement of the same failure: a retry never passes by
    itself."""
    if verdict.passed or "OutOfMemoryError" not in verdict.reason:
        return False
    return verdict.check == "referee" or (verdict.check == "crash" and INPUTS_NOT_ALLOCATED in verdict.reason)


def plan_edge_cases(problem, variants: list[str], settings: VerifySettings, interpreter: bool) \
        -> tuple[list, list[str]]:
    """(the edge cases the judge runs, those skipped with why): edges.plan_edges from the smallest variant
    judged; none for the library path (it runs the reference itself) or with settings.edges off."""
    from kerntailor.verify.edges import plan_edges

    if not settings.edges or settings.library_path:
        return [], []
    base = special_variant(problem, variants)
    if base is None:
        return [], []

    def memory(p, names):
        from kerntailor.measure.memory import referee_plan

        return referee_plan(p, names, gpu=True)

    try:
        return plan_edges(problem, base, interpreter, settings.seed, memory)
    except Exception as e:   # noqa: BLE001 - a planning bug must not end the verification: it is said instead
        lines = str(e).strip().splitlines()
        return [], [f"edges: not planned, the planner raised {type(e).__name__}: {lines[0] if lines else ''}"[:300]]


def fp8_format_of(tree: ast.Module) -> str | None:
    """The candidate's module-level `FP8_FORMAT = "..."` (read from its source, never by importing it)."""
    value = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FP8_FORMAT"
                                                for t in node.targets):
            value = node.value.value if isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str) else None
    return value


def assemble(events, ended, log_tail, base, variants, skipped, settings, interpreter, wall_s,
             edges_skipped=()) -> Verdict:
    """Turn the judge's events (and how it ended) into a Verdict."""
    for e in events:
        if e.get("event") == "bad_candidate":
            raise CandidateError(f"{base['candidate']}: {e['reason']}")
        if e.get("event") == "bad_problem":
            raise ProblemError(e["reason"])
        if e.get("event") == "mode":
            base = {**base, "mode": e["mode"]}
        if e.get("event") == "fp8":
            base = {**base, "tolerance": _tolerance_text(settings.tf32, e["precision"], e["format"])}
        if e.get("event") == "sandbox":
            base = {**base, "sandbox": e["line"]}
    notes = [e["text"] for e in events if e.get("event") == "note"]
    if interpreter and settings.time:
        notes.append("timing needs a GPU: not timed under the interpreter")
    cases = tuple(CaseResult(e["variant"], e["draw"], e["rel_norm"], e["max_abs"], e["max_rel"], e["policy"],
                             e.get("eager_rel_norm"), e.get("exact_rel_norm"), e.get("refused"))
                  for e in events if e.get("event") == "case")
    edges_skipped = tuple(edges_skipped) + tuple(e["reason"] for e in events if e.get("event") == "edge_skipped")
    common = dict(cases=cases, variants_skipped=tuple(skipped), edges_skipped=edges_skipped, wall_s=wall_s, **base)
    fail = next((e for e in events if e.get("event") == "fail"), None)
    done = next((e for e in events if e.get("event") == "done"), None)

    if fail is not None:
        return Verdict(False, fail["check"], fail["reason"], checks=tuple(fail.get("checks", ())),
                       variant=fail.get("variant"), draw=fail.get("draw"),
                       where=tuple(fail["where_index"]) if fail.get("where_index") else None,
                       output_index=fail.get("output_index"), max_abs_err=fail.get("max_abs"),
                       max_rel_err=fail.get("max_rel"), rel_norm_err=fail.get("rel_norm"),
                       notes=tuple(notes + ([fail["trace"]] if fail.get("trace") else [])), **common)
    if done is None:
        ran = _checks_until("timeout" if ended == "timeout" else "crash")
        progress = [e for e in events if e.get("event") == "progress"]
        last = progress[-1] if progress else {}
        at = dict(variant=last.get("variant"), draw=last.get("draw"))
        if ended == "timeout":
            reason = f"no answer within {settings.timeout_s:g} s ({_where(events)}): a hang or an endless loop"
            return Verdict(False, "timeout", reason, checks=ran, notes=tuple(notes), **at, **common)
        if ended.startswith("signal"):
            sig = _signal_name(int(ended.split()[1]))
            what = f"the judge died of {sig}"
        else:
            what = f"the judge exited ({ended})"
        last_line = log_tail.splitlines()[-1] if log_tail else ""
        reason = f"{what} ({_where(events)})" + (f": {last_line[:200]}" if last_line else "")
        return Verdict(False, "crash", reason, checks=ran, notes=tuple(notes + [log_tail[-2000:]]), **at, **common)

    checks = list(done["checks"])
    timing = None
    timing_event = next((e for e in events if e.get("event") == "timing"), None)
    timing_error = next((e for e in events if e.get("event") == "timing_error"), None)
    if timing_error is not None:
        notes.append(f"timing failed: {timing_error['reason']}")
    if done is not None and ended == "timeout" and timing_event is None:
        notes.append(f"timing did not finish within {settings.time_timeout_s:g} s")
    # the worst of the regular draws: on the special draw the finite values are judged with bounds widened to
    # PyTorch's own error there (huge inputs make it large), an edge case may be another dtype or refused; their
    # cases stay in `cases`
    regular = [c for c in cases if c.draw != "special" and not c.draw.startswith("edge:")] or list(cases)
    worst = max(regular, key=lambda c: c.rel_norm, default=None)
    summary = dict(variant=worst.variant if worst else None, draw=worst.draw if worst else None,
                   max_abs_err=max((c.max_abs for c in regular), default=None),
                   max_rel_err=max((c.max_rel for c in regular), default=None),
                   rel_norm_err=worst.rel_norm if worst else None)
    if timing_event is not None:
        timing = timing_event["report"]
        checks.append("speed")
        cand = next(t for t in timing["timings"] if t["name"] == "candidate")
        if cand["median_s"] < timing["physics_floor_s"]:
            reason = (f"suspect: faster than physics: {cand['median_s'] * 1e6:.2f} µs < floor "
                      f"{timing['physics_floor_s'] * 1e6:.2f} µs ({timing['physics_source']}); "
                      "the kernel skips work, reads less than its inputs, or is timed wrongly")
            return Verdict(False, "speed", reason, checks=tuple(checks), notes=tuple(notes), timing=timing,
                           **summary, **common)
    edge_cases = [c for c in cases if c.draw.startswith("edge:")]
    n_var = len({c.variant for c in cases if c not in edge_cases})
    special = next((c.variant for c in cases if c.draw == "special"), None)
    extra = f" + special values on {special}" if special else ""
    if edge_cases:
        refused = sum(c.refused is not None for c in edge_cases)
        extra += f" + {len(edge_cases)} edge case(s), {refused} refused by a named error"
    reason = (f"all checks passed on {len(cases)} cases ({n_var} variant(s) x {settings.draws} draws{extra}); worst "
              f"‖out−ref‖/‖ref‖ = {summary['rel_norm_err'] or 0:.2g} ({worst.policy if worst else 'exact'} "
              f"policy)")
    exact = [c.exact_rel_norm for c in cases if c.exact_rel_norm is not None]
    if exact:
        reason += f"; vs the unquantized reference (what fp8 costs) ≤ {max(exact):.2g}"
    return Verdict(True, None, reason, checks=tuple(checks), notes=tuple(notes), timing=timing, **summary,
                   **common)


def _checks_until(name: str) -> tuple[str, ...]:
    return CHECKS[:CHECKS.index(name) + 1]
