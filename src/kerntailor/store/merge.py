"""Moving one store's results into another: how a distributed bench keeps ONE writer of the real store.

A Ray task (generate/ray_bench.py) runs `generate` against a private store file on its worker, then reads that
file's rows out (`dump_rows`, plain tuples: they pickle and travel through Ray's object store) and returns them;
the driver, the only process that opens the real store for writing, adds them in one transaction
(`merge_rows`): a problem's runs, candidates, builds, verdicts, timings, LLM turns and winner all land, or none.
Row ids are the receiving store's own (foreign keys are renumbered); a winner replaces the stored one for its
problem and toolchain, as `Store.record_winner` does. The other way, read-only: `dump_winner` takes one problem's
stored winner out of the real store, for the worker to put in its private one before it starts, so that a Ray
bench is served from the store where a local one would be (those seeded rows are not sent back: `last_ids`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kerntailor.store.connect import BUSY_TIMEOUT_S
from kerntailor.store.db import Store

# in insertion order: each table after the tables its foreign keys point to; "winners" is upserted, not inserted
TABLES = ("toolchains", "runs", "candidates", "builds", "verdicts", "timings", "winners", "llm_attempts",
          "llm_turns")
FOREIGN = {"candidates": {"run_id": "runs"}, "builds": {"candidate_id": "candidates"},
           "verdicts": {"candidate_id": "candidates"}, "timings": {"candidate_id": "candidates"},
           "winners": {"candidate_id": "candidates"}, "llm_attempts": {"run_id": "runs"},
           "llm_turns": {"attempt_id": "llm_attempts", "candidate_id": "candidates"}}

Dump = dict[str, tuple[tuple[str, ...], list[tuple]]]   # table -> (column names, rows)


def _read_only(path: str | Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)


def _select(conn: sqlite3.Connection, table: str, where: str = "1", args: tuple = ()) -> tuple[tuple, list]:
    columns = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
    order = "key" if table == "toolchains" else "id"
    return columns, conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {where} ORDER BY {order}",
                                 args).fetchall()


def dump_rows(path: str | Path, after: dict[str, int] | None = None) -> Dump:
    """Every result row of the store file at `path` (read-only; rechecks are not a generate's results), or
    only those with an id above `after[table]`."""
    after = after or {}
    with contextlib.closing(_read_only(path)) as conn:
        return {table: _select(conn, table, "1" if table == "toolchains" else "id > ?",
                               () if table == "toolchains" else (after.get(table, 0),)) for table in TABLES}


def last_ids(path: str | Path) -> dict[str, int]:
    """The highest id of each table (what `dump_rows(after=...)` leaves out)."""
    with contextlib.closing(_read_only(path)) as conn:
        return {t: conn.execute(f"SELECT coalesce(max(id), 0) FROM {t}").fetchone()[0] for t in TABLES
                if t != "toolchains"}


def dump_winner(path: str | Path, problem_key: str, toolchain_key: str) -> Dump:
    """The stored winner of one problem and toolchain with what `lookup_winner` reads along with it (its
    candidate, that candidate's run, verdicts and toolchain), read-only: {} where there is none (or no readable
    store). What a Ray worker copies into its private store, so it is served from the store as a local run is."""
    try:
        with contextlib.closing(_read_only(path)) as conn:
            winner = _select(conn, "winners", "problem_key = ? AND toolchain_key = ?", (problem_key, toolchain_key))
            if not winner[1]:
                return {}
            (cid,) = [row[winner[0].index("candidate_id")] for row in winner[1]]
            candidate = _select(conn, "candidates", "id = ?", (cid,))
            run = _select(conn, "runs", "id = ?", (candidate[1][0][candidate[0].index("run_id")],))
            keys = (toolchain_key, run[1][0][run[0].index("toolchain_key")])   # a rechecked winner: two
            return {"toolchains": _select(conn, "toolchains", "key IN (?, ?)", keys), "runs": run,
                    "candidates": candidate,
                    "verdicts": _select(conn, "verdicts", "candidate_id = ?", (cid,)), "winners": winner}
    except sqlite3.Error:   # no store there, an older schema, a damaged file: nothing to serve from
        return {}


def merge_rows(store: Store, dump: Dump, relocate: Callable[[Any], Any] = lambda v: v) -> dict[str, int]:
    """Add `dump`'s rows to `store` in one transaction; `relocate` maps each text value (the worker's private
    folder to the bench's --out). Returns how many rows each table received."""
    ids: dict[str, dict[int, int]] = {table: {} for table in TABLES}
    counts = {}
    with store._write() as c:
        for table in TABLES:
            columns, rows = dump.get(table, ((), []))
            for row in rows:
                record = {k: relocate(v) if isinstance(v, str) else v for k, v in zip(columns, row)}
                for column, parent in FOREIGN.get(table, {}).items():
                    if record.get(column) is not None:
                        record[column] = ids[parent][record[column]]
                if table == "toolchains":
                    _insert(c, table, record, "OR IGNORE")
                elif table == "winners":
                    Store._upsert_winner(c, record["problem_key"], record["toolchain_key"], record["problem"],
                                         record["target"], record["candidate_id"], record["median_us"],
                                         record["label"], record["report"])
                else:
                    old = record.pop("id")
                    ids[table][old] = _insert(c, table, record)
            counts[table] = len(rows)
    return counts


def _insert(c: sqlite3.Connection, table: str, record: dict, conflict: str = "") -> int:
    names = list(record)
    cur = c.execute(f"INSERT {conflict} INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    tuple(record[n] for n in names))
    return int(cur.lastrowid)
