"""Random: seeded uniform draws from the space without repeats (the baseline every strategy must beat).

With a cost model, each round draws `pool_factor x batch_size` configs and times the best-predicted
`batch_size` of them.
"""

from __future__ import annotations

import random

from kerntailor.search.strategy import Session, Strategy


class RandomSearch(Strategy):
    name = "random"

    def search(self, session: Session) -> None:
        rng = random.Random(self.seed)
        while True:
            pool = session.sample_new(rng, self.pool_size(session))
            if not pool:
                return
            session.evaluate(session.rank(pool, self.batch_size))
