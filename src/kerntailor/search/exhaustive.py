"""Exhaustive: every config of the space once, for spaces small enough to time whole.

With a cost model the space is timed best-predicted first, so a budget that cuts it short keeps the
likeliest configs; a ranker that drops configs leaves them untimed.
"""

from __future__ import annotations

from kerntailor.search.strategy import Session, Strategy


class Exhaustive(Strategy):
    name = "exhaustive"

    def search(self, session: Session) -> None:
        configs = session.rank(session.space.enumerate())
        for start in range(0, len(configs), self.batch_size):
            session.evaluate(configs[start:start + self.batch_size])
