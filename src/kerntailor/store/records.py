"""What the store's queries return: one frozen dataclass per kind of row.

Result columns come back decoded (codec.decode): the stage's own type where it still exists, else the
plain dict that was stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kerntailor.store.keys import ProblemKey

# A recheck slower than the stored time by more than this fraction is a regression. GPU timings of one
# kernel repeat within a few percent run to run (median of many, L2 flushed), so 10 % is a real change.
REGRESSION_THRESHOLD = 0.10


@dataclass(frozen=True)
class Run:
    id: int
    started: str
    finished: str | None
    command: str
    problem_key: str
    problem: ProblemKey
    target: str
    toolchain_key: str
    status: str


@dataclass(frozen=True)
class Candidate:
    id: int
    run_id: int
    key: str
    family: str
    config: Any          # the Config (or the dict that was stored)
    source: str
    kernel: Any          # the KernelSource, or None
    created: str


@dataclass(frozen=True)
class StoredBuild:
    id: int
    candidate_id: int
    target: str
    ok: bool
    usable: bool
    result: Any          # BuildResult
    created: str


@dataclass(frozen=True)
class StoredVerdict:
    id: int
    candidate_id: int
    passed: bool
    check: str | None
    verdict: Any         # Verdict
    created: str


@dataclass(frozen=True)
class StoredTiming:
    id: int
    candidate_id: int
    median_us: float
    label: str           # "measured" | "predicted"
    measurement: Any
    created: str


@dataclass(frozen=True)
class Winner:
    """The best verified candidate for one problem on one target under one toolchain: a cache entry."""

    id: int
    problem_key: str
    toolchain_key: str
    problem: ProblemKey
    target: str
    median_us: float | None
    label: str | None
    report: Any
    candidate: Candidate
    created: str
    updated: str

    @property
    def candidate_id(self) -> int:
        return self.candidate.id


@dataclass(frozen=True)
class Recheck:
    """A winner re-verified (and re-timed) on another toolchain. `regression` says whether it got worse."""

    id: int
    winner_id: int
    toolchain_key: str
    passed: bool
    old_median_us: float | None
    new_median_us: float | None
    label: str | None
    regression: bool
    reason: str          # one line: "ok", "now fails: accuracy: ...", "slower: 10.0 → 12.5 µs (+25%)"
    promoted_winner_id: int | None
    created: str


@dataclass(frozen=True)
class TrainingRow:
    """One measured candidate on a target: what a learned cost model trains on."""

    candidate_id: int
    family: str
    config: dict[str, Any]        # the Config's fields, as stored
    facts: dict[str, Any] | None  # IsaFacts of its latest usable build for the target, if any
    median_us: float
    problem_key: str
    toolchain_key: str
