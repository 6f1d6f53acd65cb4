"""Evolutionary: a (mu + lambda) genetic search over a Space, seeded and deterministic.

Generation 0 is `population` random configs. Each later generation breeds `batch_size` children from the
best `population` ok trials so far (so the best ever found always stay parents: elitism):

- selection: tournaments of `tournament` parents, best wins; the `elite` best are also picked directly
  with odds `elite_rate`, so most children explore around the current winners;
- crossover (odds `crossover_rate`): each knob from one parent or the other; an invalid child falls back
  to the first parent;
- mutation: one step along one knob (`Space.neighbours`), repeated while a coin of odds `mutation_rate`
  comes up; a child that is a copy of something already timed is always mutated;
- immigrants (odds `immigrant_rate`): a fresh random config, so the search does not collapse early.

Failed trials (crash, hang, wrong answer) are kept in the record but never become parents. With a cost
model, `pool_factor x batch_size` children are bred and the best-predicted `batch_size` are timed. The
same seed, space and evaluator give the same sequence of trials.
"""

from __future__ import annotations

import random

from kerntailor.search.config import Config
from kerntailor.search.strategy import Session, Strategy, Trial

_TRIES_PER_CHILD = 20


class Evolutionary(Strategy):
    name = "evolutionary"

    def __init__(self, *, seed: int = 0, population: int = 16, elite: int = 4, tournament: int = 3,
                 crossover_rate: float = 0.5, mutation_rate: float = 0.5, elite_rate: float = 0.3,
                 immigrant_rate: float = 0.1, batch_size: int = 8, pool_factor: int = 4):
        super().__init__(seed=seed, batch_size=batch_size, pool_factor=pool_factor)
        if population < 1 or not 0 <= elite <= population or tournament < 1:
            raise ValueError(f"need population >= 1, 0 <= elite <= population, tournament >= 1; got "
                             f"{population=}, {elite=}, {tournament=}")
        for name, p in (("crossover_rate", crossover_rate), ("mutation_rate", mutation_rate),
                        ("elite_rate", elite_rate), ("immigrant_rate", immigrant_rate)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {p}")
        self.population = population
        self.elite = elite
        self.tournament = tournament
        self.crossover_rate = crossover_rate
        self.mutation_rate = min(mutation_rate, 0.95)
        self.elite_rate = elite_rate
        self.immigrant_rate = immigrant_rate

    def search(self, session: Session) -> None:
        rng = random.Random(self.seed)
        first = session.sample_new(rng, self.population * (self.pool_size(session) // self.batch_size))
        if not first:
            return
        session.evaluate(session.rank(first, self.population))
        while True:
            parents = session.ok_trials()[:self.population]
            if parents:
                pool = self._breed(session, rng, parents, self.pool_size(session))
            else:   # everything failed so far: keep exploring at random
                pool = session.sample_new(rng, self.pool_size(session))
            if not pool:
                return
            session.evaluate(session.rank(pool, self.batch_size))

    # --- breeding -------------------------------------------------------------------------------------------

    def _pick(self, rng: random.Random, parents: list[Trial]) -> Config:
        """A parent: one of the elite (odds elite_rate) or a tournament winner. `parents` is best-first."""
        if self.elite and rng.random() < self.elite_rate:
            return parents[rng.randrange(min(self.elite, len(parents)))].config
        best = min(rng.randrange(len(parents)) for _ in range(self.tournament))
        return parents[best].config

    def _mutate(self, session: Session, rng: random.Random, config: Config, *, force: bool) -> Config:
        if not force and rng.random() >= self.mutation_rate:
            return config
        while True:
            near = session.space.neighbours(config)
            if not near:
                return config
            config = near[rng.randrange(len(near))]
            if rng.random() >= self.mutation_rate:
                return config

    def _child(self, session: Session, rng: random.Random, parents: list[Trial]) -> Config:
        space = session.space
        if rng.random() < self.immigrant_rate:
            return space.sample(rng)
        child = self._pick(rng, parents)
        if rng.random() < self.crossover_rate:
            mixed = space.crossover(child, self._pick(rng, parents), rng)
            if space.is_valid(mixed):
                child = mixed
        return self._mutate(session, rng, child, force=not session.is_new(child))

    def _breed(self, session: Session, rng: random.Random, parents: list[Trial], n: int) -> list[Config]:
        children: dict[Config, None] = {}
        for _ in range(n * _TRIES_PER_CHILD):
            if len(children) >= n:
                break
            child = self._child(session, rng, parents)
            if session.is_new(child) and child not in children:
                children[child] = None
        out = list(children)
        if len(out) < n:   # the neighbourhood is used up: top up at random
            out += session.sample_new(rng, n - len(out), exclude=out)
        return out
