"""Ranking with a cost model, and the `rank(configs) -> configs` hook the search strategies take.

Any model with `predict(candidates) -> list[float]` (seconds) ranks: the analytical model, the learned
model, or a test's stub.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from kerntailor.costmodel.candidate import Candidate
from kerntailor.search.config import Config


class CostModel(Protocol):
    def predict(self, candidates: Sequence[Candidate]) -> list[float]: ...


def rank(candidates: Sequence[Candidate], model: CostModel) -> list[Candidate]:
    """`candidates` fastest-predicted first (stable: ties keep their order; inf and NaN go last)."""
    predicted = list(model.predict(list(candidates)))
    if len(predicted) != len(candidates):
        raise ValueError(f"model predicted {len(predicted)} times for {len(candidates)} candidates")
    key = [p if p == p else float("inf") for p in predicted]   # NaN -> inf
    order = sorted(range(len(candidates)), key=lambda i: key[i])
    return [candidates[i] for i in order]


def config_ranker(model: CostModel, make_candidate: Callable[[Config], Candidate]
                  ) -> Callable[[list[Config]], list[Config]]:
    """The search's `rank` hook: configs fastest-predicted first, each turned into a Candidate by
    `make_candidate` (e.g. `lambda c: Candidate(c, work)`, or one that looks up ISA facts)."""
    def rank_configs(configs: list[Config]) -> list[Config]:
        return [c.config for c in rank([make_candidate(c) for c in configs], model)]
    return rank_configs
