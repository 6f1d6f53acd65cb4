"""Strategies by name: `get_strategy("exhaustive" | "random" | "evolutionary", **settings)`."""

from __future__ import annotations

from kerntailor.search.evolutionary import Evolutionary
from kerntailor.search.exhaustive import Exhaustive
from kerntailor.search.random_search import RandomSearch
from kerntailor.search.strategy import Strategy

STRATEGIES: dict[str, type[Strategy]] = {
    Exhaustive.name: Exhaustive,
    RandomSearch.name: RandomSearch,
    Evolutionary.name: Evolutionary,
}


def get_strategy(name: str, **settings) -> Strategy:
    """A new strategy called `name`, built with its settings (seed, batch_size, population, ...)."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown search strategy {name!r}; known: {', '.join(STRATEGIES)}") from None
    return cls(**settings)
