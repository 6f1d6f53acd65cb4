"""The LLM proposer's loop: N independent attempts x up to T turns, each turn's kernel through the same
build -> referee -> stopwatch path as any candidate, every request, reply and verdict in the store.

A turn: render the prompt (first turn: the facts; later turns: the facts plus what happened to the previous
kernel), send it, extract the module from the reply, check it statically, build it (probe + cross-compile
for the target: ISA facts), judge it (verify_candidate; timed against eager and torch.compile in measured
mode), record it. Predicted mode (no target GPU here): an attempt ends at its first passing kernel, since
there is no time to improve on. Measured mode: passing kernels are refined with their timing for the
remaining turns. The best kernel is the fastest passing one (measured), or the first to pass (predicted).

Budgets: attempts and turns (the loop's bounds); tokens (prompt + completion as the server reports them,
for the whole run including resumed turns, checked before each request, whose completion is capped at what
is left); seconds (this invocation's wall clock, checked before each request).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kerntailor.errors import CandidateError, ProposerError
from kerntailor.propose import feedback as fb
from kerntailor.propose.extract import extract_code
from kerntailor.propose.prompts import PROMPT_VERSION, Best, ProblemFacts, first_turn, problem_facts, refine
from kerntailor.store.llm import LlmTurn

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int, "float | None"], None]   # stage, turns done, turns in all, best seconds


@dataclass(frozen=True)
class ProposerSettings:
    """What the user sets for one LLM proposer run (never tuned)."""

    target: str = "mi300x"
    dtype: str | None = None
    attempts: int = 2                   # independent conversations
    turns: int = 3                      # requests per attempt (the first plus refinements)
    max_tokens: int | None = 200_000    # prompt + completion tokens for the whole run (None: no limit)
    max_seconds: float | None = 1800.0  # wall clock of this invocation (None: no limit)
    reply_tokens: int = 8192            # completion cap of one request
    temperature: float | None = None    # None: the server's default
    out_dir: Path = Path("out")         # kernels are written to OUT/llm/
    seed_kernel: Path | None = None     # a user's kernel file: judged first, the starting point
    measured: bool | None = None        # None: measured when the target is this machine's GPU
    cross_compile: bool = True          # build step: import + cross-compile for the target (ISA facts)
    build_timeout_s: float = 120.0
    verify_timeout_s: float = 300.0
    request_timeout_s: float = 600.0
    max_retries: int = 2                # the openai client's retries of a failed request
    use_store: bool = True
    store_path: Path | None = None
    run_id: int | None = None           # record into (and resume) this run of the store
    prompt_version: str = PROMPT_VERSION


@dataclass(frozen=True)
class ProposerResult:
    problem: str
    target: str
    mode: str                           # "measured" | "predicted"
    passed: bool                        # some kernel (seed or reply) passed the referee
    source: str | None                  # the best passing kernel module
    kernel_path: Path | None
    verdict: object | None              # its Verdict
    median_us: float | None             # its measured median (None in predicted mode)
    candidate_id: int | None            # its row in the store's candidates (None without a store)
    turns: tuple[LlmTurn, ...]          # every turn of the run in order, resumed ones included; attempt 0 = seed
    stopped: str                        # why the loop ended: "done", or the budget / endpoint error
    tokens: int                         # tokens of the whole run
    seconds: float                      # this invocation
    run_id: int | None
    model: str


class _Stop(Exception):
    """A budget or the endpoint ended the loop; the message says which."""


def run_proposer(problem_path: str | Path, settings: ProposerSettings, store=None, progress: Progress | None = None,
                 *, client=None) -> ProposerResult:
    """Run the LLM proposer on `problem_path` and return its best verified kernel (see the module docstring).

    `store`: a Store to record into (default: open the one at settings.store_path when settings.use_store).
    `client`: a ChatClient-like object with .config and .complete(...) (default: from the environment).
    Raises ProposerError (one line) when the extra or the endpoint variables are missing, a resumed run does
    not match, or the endpoint fails before any reply.
    """
    from kerntailor.propose.llm import ChatClient, LLMConfig

    started = time.monotonic()
    if settings.attempts < 1 or settings.turns < 1:
        raise ProposerError(f"attempts and turns must be at least 1 (got {settings.attempts}, {settings.turns})")
    if client is None:
        client = ChatClient(LLMConfig.from_env(), timeout_s=settings.request_timeout_s,
                            max_retries=settings.max_retries)
    target, problem, local, measured = _setup(problem_path, settings)
    own_store = store is None and settings.use_store
    if own_store:
        from kerntailor.store import Store

        store = Store(settings.store_path)
    try:
        run_id, previous = _open_run(store, settings, problem, target)
        facts = problem_facts(problem, target, measured=measured,
                              gpu_name=local.display_name if measured and local else None)
        judge = _Judge(problem, target, measured, settings, store, run_id, facts, model=client.config.model,
                       base_url=client.config.base_url)
        loop = _Loop(settings, client, judge, facts, list(previous), started, progress)
        try:
            stopped = loop.run()
        except BaseException:
            _finish(store, run_id, "interrupted")
            raise
        _finish(store, run_id, "done")
    finally:
        if own_store and store is not None:
            store.close()
    return loop.result(problem, target, measured, stopped, run_id)


def seed_kernel(problem_path: str | Path, kernel_path: str | Path, settings: ProposerSettings) -> LlmTurn:
    """Judge a user's kernel file as the proposer would (build, referee, timing): attempt 0, turn 0. Needs no
    LLM endpoint. Inside run_proposer, settings.seed_kernel does this and makes it the starting point."""
    target, problem, _, measured = _setup(problem_path, settings)
    facts = problem_facts(problem, target, measured=measured)
    return _Judge(problem, target, measured, settings, None, None, facts).seed(Path(kernel_path))


def _setup(problem_path, settings: ProposerSettings):
    """(target, problem, local target or None, measured): measured unless asked otherwise when the target is
    this machine's GPU."""
    from kerntailor.problem import load_problem
    from kerntailor.targets import detect_local_target, resolve_target

    target = resolve_target(settings.target)
    problem = load_problem(problem_path, dtype=settings.dtype)
    local = detect_local_target()
    measured = settings.measured if settings.measured is not None else (
        local is not None and local.name == target.name)
    return target, problem, local, measured


# ---- the store's run


def _finish(store, run_id: int | None, status: str) -> None:
    """Close the run if it is the proposer's own (a generate run that called the proposer closes its own)."""
    if store is not None and run_id is not None:
        run = store.run(run_id)
        if run is not None and run.command == "propose-llm":
            store.finish_run(run_id, status)


def _open_run(store, settings: ProposerSettings, problem, target) -> tuple[int | None, list[LlmTurn]]:
    """(run id, turns already recorded under it). A new run unless settings.run_id names one to resume."""
    if store is None:
        return None, []
    from kerntailor.store import ProblemKey, toolchain_fingerprint
    from kerntailor.store.llm import llm_turns

    pkey, toolchain = ProblemKey.of(problem, target), toolchain_fingerprint()
    if settings.run_id is None:
        return store.start_run("propose-llm", pkey, toolchain), []
    run = store.run(settings.run_id)
    if run is None:
        raise ProposerError(f"no run {settings.run_id} in store {store.path}")
    if run.problem_key != pkey.key() or run.toolchain_key != toolchain.key():
        what = "problem/target" if run.problem_key != pkey.key() else "toolchain"
        raise ProposerError(f"run {settings.run_id} in store {store.path} is for another {what} "
                            f"({run.problem.name} on {run.target}); start a new run instead of resuming it")
    return run.id, llm_turns(store, run.id)


# ---- judging one kernel: extract, static check, build, referee, record


class _Judge:
    def __init__(self, problem, target, measured: bool, settings: ProposerSettings, store, run_id, facts, *,
                 model: str = "", base_url: str = ""):
        self.problem, self.target, self.measured, self.settings = problem, target, measured, settings
        self.store, self.run_id, self.model, self.base_url = store, run_id, model, base_url
        self._attempt_ids: dict[int, int] = {}
        self.shapes = dict(facts.variant_shapes)
        self.dir = Path(settings.out_dir) / "llm"

    def path(self, attempt: int, turn: int) -> Path:
        return self.dir / f"a{attempt}_t{turn}_kernel.py"

    def seed(self, path: Path) -> LlmTurn:
        try:
            code = path.read_text()
        except OSError as e:
            raise CandidateError(f"cannot read the seed kernel {path}: {e.strerror}") from None
        return self.turn(0, 0, (), "", code, "")

    def turn(self, attempt: int, turn: int, messages, reply: str, code: str | None, why_not: str,
             **usage) -> LlmTurn:
        """Judge `code` (None: nothing could be extracted, for `why_not`) and record the turn."""
        started = time.monotonic()
        base = dict(attempt=attempt, turn=turn, messages=tuple(messages), reply=reply, code=code, **usage)
        if code is None:
            t = LlmTurn(outcome="no_code", error=why_not, feedback=fb.no_code(why_not), **base)
            return self._record(t, started)
        path = self.path(attempt, turn)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
        base["kernel_path"] = str(path)
        outcome = self._build(path)
        if outcome is not None and not outcome.ok:
            trace = outcome.trace.replace(str(path.resolve()), path.name)
            t = LlmTurn(outcome="build", error=outcome.error, feedback=fb.build_error(outcome.error, trace),
                        build=outcome, **base)
            return self._record(t, started)
        from kerntailor.verify import VerifySettings, verify_candidate

        try:
            verdict = verify_candidate(self.problem, path, VerifySettings(time=self.measured,
                                                                          timeout_s=self.settings.verify_timeout_s))
        except CandidateError as e:
            error = str(e).replace(f"{path}: ", "")
            return self._record(LlmTurn(outcome="build", error=error, feedback=fb.build_error(error),
                                        build=outcome, **base), started)
        isa = dict(outcome.isa) if outcome is not None else None
        text = fb.verdict_feedback(verdict, self.shapes, isa, f"{self.target.name} ({self.target.arch})")
        if outcome is not None and outcome.notes:
            text += "\n" + "\n".join(f"- build note: {n}" for n in outcome.notes)
        median = _median_us(verdict.timing)
        result = "passed" if verdict.passed else ("static" if verdict.check == "static" else "failed")
        t = LlmTurn(outcome=result, error=None if verdict.passed else f"{verdict.check}: {verdict.reason}",
                    feedback=text, verdict=verdict, build=outcome, median_us=median, **base)
        return self._record(t, started)

    def _build(self, path: Path):
        """The build outcome, or None when skipped (no cross-compile, or a file the referee rejects as it is)."""
        if not self.settings.cross_compile:
            return None
        from kerntailor.propose.build import build_module
        from kerntailor.verify.static import parse_candidate, problem_imports, static_check

        try:
            source, tree = parse_candidate(path)
        except CandidateError:
            return None  # the referee says why, in one line
        if static_check(source, tree, problem_stem=self.problem.path.stem,
                        tensor_args=[s.shape is not None for s in self.problem.inputs],
                        reference_imports=problem_imports(self.problem.source)):
            return None  # rejected statically by the referee without running anything
        return build_module(path, self.problem, self.target, timeout_s=self.settings.build_timeout_s)

    def _record(self, t: LlmTurn, started: float) -> LlmTurn:
        t = dataclasses.replace(t, judge_s=time.monotonic() - started)
        if not t.passed:   # why this turn's kernel was dropped: no code, a build error, or the referee's check
            log.info("attempt %d turn %d dropped (%s): %s", t.attempt, t.turn, t.outcome, t.error)
        if self.store is None:
            return t
        from kerntailor.store.llm import record_llm_turn

        cid = None
        if t.code is not None:
            cid = self.store.record_candidate(self.run_id, family="llm", source=t.code,
                                              config={"attempt": t.attempt, "turn": t.turn})
            if t.verdict is not None:
                self.store.record_verdict(cid, t.verdict)
            if t.median_us is not None:
                self.store.record_timing(cid, t.verdict.timing, median_us=t.median_us, label="measured")
        t = dataclasses.replace(t, candidate_id=cid)
        record_llm_turn(self.store, self._attempt_row(t.attempt), t)
        return t

    def _attempt_row(self, attempt: int) -> int:
        """The attempt's row in llm_attempts, recorded at its first turn (attempt 0: the seed)."""
        if attempt not in self._attempt_ids:
            from kerntailor.store.llm import record_llm_attempt

            seed = attempt == 0
            self._attempt_ids[attempt] = record_llm_attempt(
                self.store, self.run_id, attempt, model="seed" if seed else self.model,
                base_url="" if seed else self.base_url, prompt_version=self.settings.prompt_version,
                settings=_settings_dict(self.settings))
        return self._attempt_ids[attempt]


def _median_us(timing) -> float | None:
    for row in (timing or {}).get("timings", []):
        if row.get("name") == "candidate":
            return float(row["median_s"]) * 1e6
    return None


def _settings_dict(settings: ProposerSettings) -> dict:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(settings).items()}


# ---- the loop


class _Loop:
    def __init__(self, settings: ProposerSettings, client, judge: _Judge, facts: ProblemFacts,
                 turns: list[LlmTurn], started: float, progress: Progress | None):
        self.s, self.client, self.judge, self.facts = settings, client, judge, facts
        self.turns, self.started = turns, started
        self.progress = progress or (lambda *a: None)
        self.tokens = sum(t.tokens for t in turns)
        self.replies = 0   # answered in this invocation

    def run(self) -> str:
        s = self.s
        seed = next((t for t in self.turns if t.attempt == 0), None)
        if s.seed_kernel is not None and seed is None:
            seed = self.judge.seed(Path(s.seed_kernel))
            self.turns.append(seed)
        start = seed if seed is not None and not seed.passed else None   # a failing seed is what turn 1 fixes
        try:
            for attempt in range(1, s.attempts + 1):
                self._attempt(attempt, start)
        except _Stop as e:
            return str(e)
        return "done"

    def _attempt(self, attempt: int, start: LlmTurn | None) -> None:
        s = self.s
        done = [t for t in self.turns if t.attempt == attempt]
        last = done[-1] if done else start
        if done and ((last.passed and not self.judge.measured) or len(done) >= s.turns):
            return
        for turn in range(len(done) + 1, s.turns + 1):
            self._check_budgets()
            self.progress(f"llm attempt {attempt}/{s.attempts} turn {turn}/{s.turns}",
                          sum(1 for t in self.turns if t.attempt > 0), s.attempts * s.turns, self._best_seconds())
            best = self._best()
            if last is None:
                messages = first_turn(self.facts, best, s.prompt_version)
            else:
                previous = last.code if last.code is not None else "# (no kernel was found in the reply)"
                messages = refine(self.facts, previous, last.feedback, best, turn=turn, turns=s.turns,
                                  passed=last.passed, version=s.prompt_version)
            reply = self._ask(messages)
            self.tokens += reply.prompt_tokens + reply.completion_tokens
            code, why_not = extract_code(reply.text)
            if code is None and reply.finish_reason == "length":
                why_not += f" (the reply hit the {s.reply_tokens}-token cap)"
            last = self.judge.turn(attempt, turn, messages, reply.text, code, why_not,
                                   finish_reason=reply.finish_reason, prompt_tokens=reply.prompt_tokens,
                                   completion_tokens=reply.completion_tokens, request_s=reply.seconds)
            self.turns.append(last)
            if last.passed and not self.judge.measured:
                return

    def _check_budgets(self) -> None:
        s = self.s
        if s.max_seconds is not None and time.monotonic() - self.started >= s.max_seconds:
            raise _Stop(f"budget: {s.max_seconds:g} s spent")
        if s.max_tokens is not None and self.tokens >= s.max_tokens:
            raise _Stop(f"budget: {self.tokens} of {s.max_tokens} tokens used")

    def _ask(self, messages):
        s = self.s
        cap = s.reply_tokens if s.max_tokens is None else min(s.reply_tokens, s.max_tokens - self.tokens)
        timeout = s.request_timeout_s
        if s.max_seconds is not None:
            timeout = min(timeout, s.max_seconds - (time.monotonic() - self.started))
        try:
            reply = self.client.complete(messages, max_tokens=cap, temperature=s.temperature, timeout_s=timeout)
        except ProposerError as e:
            if self.replies == 0:
                raise
            raise _Stop(f"endpoint error: {e}") from None
        self.replies += 1
        return reply

    def _passing(self) -> list[LlmTurn]:
        return [t for t in self.turns if t.passed]

    def _best_turn(self) -> LlmTurn | None:
        passing = self._passing()
        if not passing:
            return None
        if self.judge.measured:
            return min(passing, key=lambda t: (t.median_us is None, t.median_us or 0.0))
        return passing[0]

    def _best(self) -> Best | None:
        t = self._best_turn()
        return None if t is None else Best(t.code or "", t.feedback)

    def _best_seconds(self) -> float | None:
        t = self._best_turn()
        return None if t is None or t.median_us is None else t.median_us * 1e-6

    def result(self, problem, target, measured: bool, stopped: str, run_id) -> ProposerResult:
        best = self._best_turn()
        path = None
        if best is not None:
            path = Path(best.kernel_path) if best.kernel_path else self.judge.path(best.attempt, best.turn)
            if not path.exists():  # a resumed run's kernel, written by an earlier invocation elsewhere
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(best.code or "")
        return ProposerResult(
            problem.name, target.name, "measured" if measured else "predicted", best is not None,
            best.code if best else None, path, best.verdict if best else None, best.median_us if best else None,
            best.candidate_id if best else None, tuple(self.turns), stopped, self.tokens,
            time.monotonic() - self.started, run_id, self.client.config.model)
