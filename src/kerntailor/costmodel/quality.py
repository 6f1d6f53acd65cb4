"""How well a cost model ranks: Spearman rank correlation and top-k hit rate per problem group.

Spearman is scipy.stats.spearmanr where SciPy is installed (the `learned` extra, which the learned model
needs anyway); without it, the same statistic from numpy (average ranks for ties, then Pearson on the ranks),
so the core needs no SciPy. A group is one problem (same Work): configs are only ever ranked against configs of the
same problem, so quality is judged per group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kerntailor.costmodel.candidate import Candidate


@dataclass(frozen=True)
class Row:
    """One measurement: a candidate and its measured seconds. `group` names the problem; empty means
    the candidate's Work (`Work.key()`)."""

    candidate: Candidate
    seconds: float
    group: str = ""

    @property
    def group_key(self) -> str:
        return self.group or self.candidate.work.key()


@dataclass(frozen=True)
class GroupQuality:
    group: str
    n: int
    top_k_hit: bool           # the measured-fastest config is among the model's top k
    spearman: float           # NaN when undefined (fewer than 2 rows, or constant values)


@dataclass(frozen=True)
class Quality:
    """Ranking quality over held-out rows."""

    top5_hit_rate: float      # fraction of groups whose fastest config the model puts in its top 5
    spearman: float           # mean per-group Spearman correlation (groups where it is defined)
    spearman_all: float       # Spearman over all rows pooled (dominated by problem size; easy)
    groups: tuple[GroupQuality, ...]
    n_train: int
    n_test: int
    k: int = 5


def rankdata(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n, ties given the mean of the ranks they span (as scipy.stats.rankdata 'average')."""
    a = np.asarray(values, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a), dtype=float)
    ranks[order] = np.arange(1, len(a) + 1)
    _, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation of x and y (scipy.stats.spearmanr, else `spearman_numpy`); NaN if fewer than 2
    values or either is constant."""
    if len(x) != len(y):
        raise ValueError(f"spearman needs equal lengths, got {len(x)} and {len(y)}")
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:   # undefined (SciPy would warn and say NaN)
        return math.nan
    try:
        from scipy.stats import spearmanr
    except ImportError:
        return spearman_numpy(x, y)
    return float(spearmanr(x, y).statistic)


def spearman_numpy(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation without SciPy: Pearson's correlation of the average ranks."""
    if len(x) < 2:
        return math.nan
    rx, ry = rankdata(x), rankdata(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return math.nan
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


def score(predicted: Sequence[float], rows: Sequence[Row], *, k: int = 5, n_train: int = 0) -> Quality:
    """Quality of `predicted` seconds against the rows' measured seconds."""
    by_group: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_group.setdefault(row.group_key, []).append(i)
    groups = []
    for name, idx in by_group.items():
        measured = [rows[i].seconds for i in idx]
        guess = [predicted[i] for i in idx]
        best = idx[int(np.argmin(measured))]
        top = [idx[j] for j in np.argsort(guess, kind="mergesort")[:k]]
        groups.append(GroupQuality(name, len(idx), best in top, spearman(guess, measured)))
    defined = [g.spearman for g in groups if not math.isnan(g.spearman)]
    return Quality(
        top5_hit_rate=float(np.mean([g.top_k_hit for g in groups])) if groups else math.nan,
        spearman=float(np.mean(defined)) if defined else math.nan,
        spearman_all=spearman(list(predicted), [r.seconds for r in rows]),
        groups=tuple(groups), n_train=n_train, n_test=len(rows), k=k)
