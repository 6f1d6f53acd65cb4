"""The search stage: which schedule to time, from a space of Configs, under a budget.

    from kerntailor.search import Budget, get_strategy, make_space
    space = make_space("matmul", get_target("mi300x"), M=4096, N=4096, K=4096, dtype="fp16")
    result = get_strategy("evolutionary", seed=0).run(space, evaluate, Budget(max_candidates=200))

- `config.py`     Config: frozen, hashable, ordered knobs of one family (what is tuned)
- `space.py`      Knob, Constraint, Space: valid Configs, enumerate / sample / neighbours
- `families.py`   every family's space for a Target and problem sizes, and what its Configs imply (SPACE_FAMILIES)
- `strategy.py`   Trial, Budget, Progress, SearchResult, Session and the Strategy base class
- `exhaustive.py`, `random_search.py`, `evolutionary.py`: one strategy each; `registry.py` by name

The caller's `evaluate(configs) -> list[Trial]` builds, verifies and times; the cost model
(`kerntailor.costmodel`) plugs in as `rank(configs) -> configs`.
"""

from kerntailor.search.config import Config
from kerntailor.search.families import (
    SPACE_FAMILIES,
    SpaceFamily,
    gemm_space,
    loop_trips,
    make_space,
    padding_factor,
    pointwise_space,
    program_count,
    reduction_space,
)
from kerntailor.search.registry import STRATEGIES, get_strategy
from kerntailor.search.space import Constraint, Knob, Space
from kerntailor.search.strategy import (
    EXHAUSTED,
    STOPPED_CANDIDATES,
    STOPPED_TIME,
    Budget,
    Progress,
    SearchResult,
    Session,
    Strategy,
    Trial,
)

__all__ = [
    "EXHAUSTED",
    "SPACE_FAMILIES",
    "SpaceFamily",
    "STOPPED_CANDIDATES",
    "STOPPED_TIME",
    "STRATEGIES",
    "Budget",
    "Config",
    "Constraint",
    "Knob",
    "Progress",
    "SearchResult",
    "Session",
    "Space",
    "Strategy",
    "Trial",
    "gemm_space",
    "get_strategy",
    "loop_trips",
    "make_space",
    "padding_factor",
    "pointwise_space",
    "program_count",
    "reduction_space",
]
