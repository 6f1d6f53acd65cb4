"""Space: the valid Configs of one family for one target and problem, as knobs plus constraints.

A Space is a list of `Knob(name, values)` (values in a meaningful order, so that "one step" along a knob
is a small change: 64 -> 128, not 64 -> 4096) and `Constraint`s that reject invalid combinations. Each
constraint names the knobs it reads, so `enumerate()` prunes a partial assignment as soon as those knobs
are set instead of testing the whole cartesian product.

The family spaces (pointwise, reduction, gemm) are built in `families.py`; tests build small ones by hand.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kerntailor.search.config import Config

_SAMPLE_TRIES = 2000   # rejection-sampling draws before sampling from the enumeration instead


class EmptySpace(ValueError):
    """A space whose constraints every combination of its knobs breaks (a matmul group too small for any tile the
    target's space offers): nothing to search; the caller keeps its default schedule."""


@dataclass(frozen=True)
class Knob:
    """One schedule knob and its allowed values, in stepping order."""

    name: str
    values: tuple[Any, ...]

    def __post_init__(self):
        values = tuple(self.values)
        if not values:
            raise ValueError(f"knob {self.name} has no values")
        if len(set(values)) != len(values):
            raise ValueError(f"knob {self.name} repeats a value: {values}")
        object.__setattr__(self, "values", values)


@dataclass(frozen=True)
class Constraint:
    """A rule over some knobs: `check(values)` is True when the combination is valid.

    `values` maps knob names to values and holds at least every knob in `knobs`. `name` says in words
    what it enforces; `violations()` reports it.
    """

    name: str
    knobs: tuple[str, ...]
    check: Callable[[Mapping[str, Any]], bool] = field(compare=False)

    def __post_init__(self):
        object.__setattr__(self, "knobs", tuple(self.knobs))


@dataclass(frozen=True)
class Space:
    """The valid Configs of `family` on `target` for a problem of `sizes` (dtype `dtype`)."""

    family: str
    knobs: tuple[Knob, ...]
    constraints: tuple[Constraint, ...] = ()
    target: str = ""
    sizes: tuple[tuple[str, int], ...] = ()
    dtype: str = "fp32"

    def __post_init__(self):
        object.__setattr__(self, "knobs", tuple(self.knobs))
        object.__setattr__(self, "constraints", tuple(self.constraints))
        sizes = self.sizes.items() if isinstance(self.sizes, Mapping) else self.sizes
        object.__setattr__(self, "sizes", tuple((str(k), int(v)) for k, v in sizes))
        names = [k.name for k in self.knobs]
        if len(set(names)) != len(names):
            raise ValueError(f"space {self.family} repeats a knob: {names}")
        for c in self.constraints:
            missing = [k for k in c.knobs if k not in names]
            if missing:
                raise ValueError(f"constraint {c.name!r} reads knobs {missing} that space {self.family} lacks")

    # --- shape ------------------------------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.knobs)

    def knob(self, name: str) -> Knob:
        for k in self.knobs:
            if k.name == name:
                return k
        raise KeyError(f"space {self.family} has no knob {name!r}; it has {', '.join(self.names)}")

    def size_of(self, name: str) -> int:
        """A problem size this space was built for ("M", "R", "numel", ...)."""
        return dict(self.sizes)[name]

    @property
    def raw_size(self) -> int:
        """The cartesian product of the knobs' values, before constraints."""
        return math.prod(len(k.values) for k in self.knobs)

    @property
    def size(self) -> int:
        """The number of valid Configs (enumerates the space once)."""
        return len(self.enumerate())

    @property
    def size_if_known(self) -> int | None:
        """`size` if the space has been enumerated already, else None (never enumerates)."""
        return len(self._all) if "_all" in self.__dict__ else None

    # --- membership ---------------------------------------------------------------------------------------

    def config(self, **values: Any) -> Config:
        """The Config with these knob values, in this space's knob order. Every knob must be given."""
        missing = [n for n in self.names if n not in values]
        extra = [n for n in values if n not in self.names]
        if missing or extra:
            raise KeyError(f"space {self.family}: missing knobs {missing}, unknown knobs {extra}")
        return Config(self.family, tuple((n, values[n]) for n in self.names))

    def violations(self, config: Config) -> list[str]:
        """Why `config` is not in this space (empty if it is)."""
        if config.family != self.family:
            return [f"family {config.family} is not {self.family}"]
        if config.names != self.names:
            return [f"knobs {config.names} are not {self.names}"]
        values = config.as_dict()
        reasons = [f"{k.name}={values[k.name]!r} is not one of {k.values}" for k in self.knobs
                   if values[k.name] not in k.values]
        if reasons:
            return reasons
        return [c.name for c in self.constraints if not c.check(values)]

    def schedule(self, config: Config, base):
        """The typed schedule codegen takes for `config`: `base` (the group's default schedule, which holds what
        the search does not tune: a precision policy, a split) with the config's knobs. A knob value no kernel
        can take raises the schedule's ScheduleError, naming it."""
        if config.family != self.family or config.family != base.family:
            raise ValueError(f"a {config.family} config for a {base.family} schedule in the {self.family} space")
        return base.retune(config.as_dict())

    def config_of(self, schedule) -> Config:
        """`schedule` as a point of this space: its value of each knob (the knob's first value where the schedule
        leaves it unset). Not necessarily valid: check `violations`."""
        known = schedule.knob_values()
        values = {k.name: known.get(k.name) for k in self.knobs}
        return Config(self.family, tuple((k.name, k.values[0] if values[k.name] is None else values[k.name])
                                         for k in self.knobs))

    def is_valid(self, config: Config) -> bool:
        return not self.violations(config)

    def __contains__(self, config: object) -> bool:
        return isinstance(config, Config) and self.is_valid(config)

    # --- generation ---------------------------------------------------------------------------------------

    @functools.cached_property
    def _checks_at(self) -> tuple[tuple[Constraint, ...], ...]:
        """For each knob position, the constraints whose knobs are all set once that knob is."""
        position = {name: i for i, name in enumerate(self.names)}
        at: list[list[Constraint]] = [[] for _ in self.knobs]
        for c in self.constraints:
            last = max((position[k] for k in c.knobs), default=0)
            at[last].append(c)
        return tuple(tuple(cs) for cs in at)

    @functools.cached_property
    def _all(self) -> tuple[Config, ...]:
        out: list[Config] = []
        names = self.names
        values: dict[str, Any] = {}

        def walk(depth: int) -> None:
            if depth == len(self.knobs):
                out.append(Config(self.family, tuple((n, values[n]) for n in names)))
                return
            knob = self.knobs[depth]
            for v in knob.values:
                values[knob.name] = v
                if all(c.check(values) for c in self._checks_at[depth]):
                    walk(depth + 1)
            del values[knob.name]

        walk(0)   # no knobs (a library group's space): the one Config with none, as raw_size says
        return tuple(out)

    def enumerate(self) -> tuple[Config, ...]:
        """Every valid Config, in knob order (the first knob varies slowest). Cached."""
        return self._all

    def __iter__(self) -> Iterator[Config]:
        return iter(self.enumerate())

    def sample(self, rng: random.Random | int) -> Config:
        """A uniformly random valid Config (rejection sampling; falls back to the enumeration when
        valid configs are rare). The same `rng` state gives the same Config. ValueError if empty."""
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        for _ in range(_SAMPLE_TRIES):
            values = {k.name: k.values[rng.randrange(len(k.values))] for k in self.knobs}
            if all(c.check(values) for c in self.constraints):
                return self.config(**values)
        configs = self.enumerate()
        if not configs:
            raise EmptySpace(f"space {self.family} on {self.target or 'this target'} has no valid config")
        return configs[rng.randrange(len(configs))]

    def neighbours(self, config: Config) -> list[Config]:
        """The valid Configs one step away: one knob moved to the previous or next value in its list."""
        values = config.as_dict()
        out = []
        for knob in self.knobs:
            try:
                i = knob.values.index(values[knob.name])
            except (KeyError, ValueError):
                continue
            for j in (i - 1, i + 1):
                if 0 <= j < len(knob.values):
                    candidate = config.replace(**{knob.name: knob.values[j]})
                    if self.is_valid(candidate):
                        out.append(candidate)
        return out

    def crossover(self, a: Config, b: Config, rng: random.Random) -> Config:
        """Each knob from `a` or `b` with equal odds (may be invalid; check with `is_valid`)."""
        va, vb = a.as_dict(), b.as_dict()
        return self.config(**{n: (va[n] if rng.random() < 0.5 else vb[n]) for n in self.names})


def power_of_two_range(lo: int, hi: int) -> tuple[int, ...]:
    """(lo, 2 lo, ..., hi) for powers of two lo <= hi."""
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return tuple(out)


def constraint(name: str, knobs: Sequence[str]):
    """Decorator: `@constraint("threads <= 1024", ["num_warps"])` over a function of the values."""
    def wrap(fn: Callable[[Mapping[str, Any]], bool]) -> Constraint:
        return Constraint(name, tuple(knobs), fn)
    return wrap
