"""The search loop's types and the one base class every strategy implements.

    strategy = get_strategy("evolutionary", seed=0)
    result = strategy.run(space, evaluate, Budget(max_candidates=200, max_seconds=600),
                          rank=ranker, progress=on_progress)
    result.best.config, result.best.value, result.stopped_by

The caller supplies `evaluate(configs) -> list[Trial]` (build, verify and time each config; one Trial per
config, in order; a crash, hang or wrong answer is a Trial with ok=False and the reason in `error`). The
strategy proposes; a `Session` owns everything else: it never times a config twice, keeps every trial in
order, stops at the budget, ranks proposals with the cost model (`rank(configs) -> configs`, best first)
so that only the top-k of each round are timed, and reports progress. Nothing here prints.

Budgets: `max_candidates` stops exactly at that many evaluated configs (a batch is cut to fit);
`max_seconds` is checked before each batch (a batch already started runs to its end), on `clock`
(time.monotonic unless a test injects another).
"""

from __future__ import annotations

import math
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from kerntailor.search.config import Config
from kerntailor.search.space import Space

STOPPED_CANDIDATES = "budget-candidates"
STOPPED_TIME = "budget-time"
EXHAUSTED = "exhausted"

_MISS_LIMIT = 64   # repeated draws in a row before sample_new walks the enumeration instead


@dataclass(frozen=True)
class Trial:
    """One evaluated config: ok with `value` (seconds; lower is better), or not ok with `error`."""

    config: Config
    ok: bool
    value: float | None = None
    error: str = ""

    def __post_init__(self):
        if self.ok and (self.value is None or not math.isfinite(self.value)):
            raise ValueError(f"an ok Trial needs a finite value, got {self.value!r} for {self.config.key()}")

    @classmethod
    def failed(cls, config: Config, error: str) -> Trial:
        return cls(config, False, None, error or "failed")


@dataclass(frozen=True)
class Budget:
    """When to stop: after `max_candidates` evaluated configs, or `max_seconds` on `clock`."""

    max_candidates: int | None = None
    max_seconds: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self):
        if self.max_candidates is not None and self.max_candidates < 0:
            raise ValueError(f"max_candidates must be >= 0, got {self.max_candidates}")
        if self.max_seconds is not None and self.max_seconds < 0:
            raise ValueError(f"max_seconds must be >= 0, got {self.max_seconds}")


@dataclass(frozen=True)
class Progress:
    """What a progress callback is told after each evaluated batch."""

    done: int                   # configs evaluated so far
    total: int | None           # the candidate budget, or the space size if smaller; None if unbounded
    failed: int                 # of `done`, how many failed
    best: Trial | None          # best ok trial so far
    batch: tuple[Trial, ...]    # the trials just evaluated
    elapsed: float              # seconds on the budget's clock


@dataclass(frozen=True)
class SearchResult:
    """Every trial in evaluation order, the best ok one (None if none passed), and why the search stopped."""

    best: Trial | None
    trials: tuple[Trial, ...]
    stopped_by: str             # "budget-candidates" | "budget-time" | "exhausted"
    strategy: str
    seconds: float

    @property
    def failures(self) -> tuple[Trial, ...]:
        return tuple(t for t in self.trials if not t.ok)

    @property
    def evaluated(self) -> int:
        return len(self.trials)


class _Stop(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


Evaluate = Callable[[list[Config]], Sequence[Trial]]
Rank = Callable[[list[Config]], Sequence[Config]]
OnProgress = Callable[[Progress], None]


class Session:
    """One search in progress: the budget, the trials so far, ranking and progress. Strategies call
    `evaluate` and `rank`; both raise an internal stop signal when the budget is spent."""

    def __init__(self, space: Space, evaluate: Evaluate, budget: Budget, *, rank: Rank | None = None,
                 progress: OnProgress | None = None):
        self.space = space
        self._evaluate = evaluate
        self.budget = budget
        self._rank = rank
        self._progress = progress
        self._start = budget.clock()
        self.trials: list[Trial] = []
        self.seen: dict[Config, Trial] = {}
        self.best: Trial | None = None

    # --- budget -----------------------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        return self.budget.clock() - self._start

    @property
    def remaining(self) -> int | None:
        """Configs left in the candidate budget (None if unbounded)."""
        if self.budget.max_candidates is None:
            return None
        return self.budget.max_candidates - len(self.trials)

    def check_budget(self) -> None:
        if self.remaining is not None and self.remaining <= 0:
            raise _Stop(STOPPED_CANDIDATES)
        if self.budget.max_seconds is not None and self.elapsed >= self.budget.max_seconds:
            raise _Stop(STOPPED_TIME)

    # --- the two things a strategy does -------------------------------------------------------------------

    def is_new(self, config: Config) -> bool:
        return config not in self.seen

    def rank(self, configs: Sequence[Config], k: int | None = None) -> list[Config]:
        """`configs` best-first by the cost model (unchanged order without one), first `k` kept."""
        configs = list(dict.fromkeys(configs))
        if self._rank is not None and len(configs) > 1:
            ranked = list(self._rank(list(configs)))
            unknown = [c for c in ranked if c not in configs]
            if unknown:
                raise ValueError(f"rank returned configs it was not given: {unknown[0].key()}")
            configs = list(dict.fromkeys(ranked))
        return configs if k is None else configs[:k]

    def evaluate(self, configs: Sequence[Config]) -> list[Trial]:
        """Evaluate the new configs among `configs` (cut to the candidate budget); the trials, in order.

        Raises the stop signal before doing anything once the budget is spent. An `evaluate` that
        raises turns into failed trials for its batch (the search goes on); KeyboardInterrupt does not.
        """
        self.check_budget()
        batch = [c for c in dict.fromkeys(configs) if self.is_new(c)]
        if self.remaining is not None:
            batch = batch[:self.remaining]
        if not batch:
            return []
        try:
            trials = list(self._evaluate(list(batch)))
            if len(trials) != len(batch):
                raise ValueError(f"evaluate returned {len(trials)} trials for {len(batch)} configs")
            for config, trial in zip(batch, trials):
                if trial.config != config:
                    raise ValueError(f"evaluate returned a trial for {trial.config.key()} in place of {config.key()}")
        except Exception as e:  # noqa: BLE001 - a broken evaluator is recorded, not fatal
            error = f"evaluate raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            trials = [Trial.failed(c, error) for c in batch]
        for trial in trials:
            self.trials.append(trial)
            self.seen[trial.config] = trial
            if trial.ok and (self.best is None or trial.value < self.best.value):
                self.best = trial
        if self._progress is not None:
            total = self.budget.max_candidates
            size = self.space.size_if_known
            if size is not None:
                total = size if total is None else min(total, size)
            self._progress(Progress(len(self.trials), total, sum(not t.ok for t in self.trials), self.best,
                                    tuple(trials), self.elapsed))
        return trials

    def sample_new(self, rng: random.Random, n: int, exclude: Sequence[Config] = ()) -> list[Config]:
        """Up to `n` distinct random configs not yet evaluated and not in `exclude`; fewer only when the
        space has fewer left. Rejection-samples first, then draws from the unseen rest of the enumeration."""
        taken = dict.fromkeys(exclude)
        out: list[Config] = []
        misses = 0
        while len(out) < n and misses < _MISS_LIMIT:
            config = self.space.sample(rng)
            if config in taken or not self.is_new(config):
                misses += 1
                continue
            taken[config] = None
            out.append(config)
        if len(out) < n:
            rest = [c for c in self.space.enumerate() if c not in taken and self.is_new(c)]
            rng.shuffle(rest)
            out += rest[:n - len(out)]
        return out

    def ok_trials(self) -> list[Trial]:
        """Ok trials, best first (ties: earlier first)."""
        return sorted((t for t in self.trials if t.ok), key=lambda t: t.value)

    def result(self, strategy: str, stopped_by: str) -> SearchResult:
        return SearchResult(self.best, tuple(self.trials), stopped_by, strategy, self.elapsed)


class Strategy(ABC):
    """A way to choose which configs to time. Subclasses implement `search(session)` and nothing else.

    Constructor arguments are the strategy's own settings (seed, population, ...), never tuned.
    `batch_size` configs are timed per round; with a ranker, `pool_factor` x that many are proposed and
    the cost model keeps the best `batch_size`.
    """

    name: ClassVar[str] = ""

    def __init__(self, *, seed: int = 0, batch_size: int = 8, pool_factor: int = 4):
        if batch_size < 1 or pool_factor < 1:
            raise ValueError(f"batch_size and pool_factor must be >= 1, got {batch_size}, {pool_factor}")
        self.seed = seed
        self.batch_size = batch_size
        self.pool_factor = pool_factor

    def run(self, space: Space, evaluate: Evaluate, budget: Budget | None = None, *, rank: Rank | None = None,
            progress: OnProgress | None = None) -> SearchResult:
        session = Session(space, evaluate, budget or Budget(), rank=rank, progress=progress)
        try:
            self.search(session)
            stopped_by = EXHAUSTED
        except _Stop as stop:
            stopped_by = stop.reason
        return session.result(self.name, stopped_by)

    def pool_size(self, session: Session) -> int:
        """How many proposals to make for one round of `batch_size` timed configs."""
        return self.batch_size * (self.pool_factor if session._rank is not None else 1)

    @abstractmethod
    def search(self, session: Session) -> None:
        """Propose configs and call `session.evaluate` until the space is exhausted (return) or the
        budget is spent (session raises)."""
