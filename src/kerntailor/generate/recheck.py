"""`kerntailor recheck`: re-verify (and, on a GPU, re-time) every stored winner on the current toolchain.

A winner whose toolchain (torch, triton, CUDA/ROCm, driver, kerntailor) differs from the current one is
judged again by the referee; the store records the outcome and names regressions: a kernel that now
fails, or one more than 10 % slower (same kind of time: measured vs measured).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kerntailor.errors import KerntailorError
from kerntailor.problem import load_problem
from kerntailor.targets import detect_local_target
from kerntailor.verify import VerifySettings, verify_candidate


@dataclass(frozen=True)
class RecheckRow:
    problem: str
    target: str
    passed: bool
    regression: bool
    reason: str


def recheck(store_path: Path | None = None,
            on_winner: Callable[[str, int, int], None] | None = None) -> list[RecheckRow]:
    from kerntailor.store import Store, toolchain_fingerprint

    store = Store(store_path)
    current = toolchain_fingerprint()
    local = detect_local_target()
    rows = []
    stale = store.stale_winners(current)
    for i, winner in enumerate(stale):
        name = winner.problem.name or winner.problem_key
        if on_winner:
            on_winner(name, i, len(stale))
        stored = Path(winner.problem.path)
        if not stored.is_absolute() and not stored.exists():   # stored before paths were resolved (store/keys.py)
            rows.append(RecheckRow(name, winner.target, False, True,
                                   f"problem file unusable: stored by the relative path {stored}, which is not "
                                   f"under {Path.cwd()}; run recheck from the folder it was generated in, or "
                                   "generate it again"))
            continue
        try:
            problem = load_problem(stored, dtype=winner.problem.dtype)
        except KerntailorError as e:
            rows.append(RecheckRow(name, winner.target, False, True, f"problem file unusable: {e}"))
            continue
        if problem.content_hash != winner.problem.content_hash:
            rows.append(RecheckRow(name, winner.target, False, False,
                                   "problem file changed since the winner was stored: generate again"))
            continue
        timed = local is not None and local.name == winner.target
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernel.py"
            path.write_text(winner.candidate.source or "")
            library = winner.candidate.family == "library"  # the reference itself: library calls allowed
            verdict = verify_candidate(problem, path, VerifySettings(time=timed, library_path=library))
        median_us, label = None, None
        if timed and verdict.timing:
            medians = {t["name"]: t["median_s"] * 1e6 for t in verdict.timing.get("timings", [])}
            median_us, label = medians.get("candidate"), "measured"
        outcome = store.record_recheck(winner, verdict, verdict.timing, toolchain=current,
                                       median_us=median_us, label=label)
        rows.append(RecheckRow(name, winner.target, outcome.passed, outcome.regression, outcome.reason))
    return rows
