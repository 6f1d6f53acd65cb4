"""Moving one store's results into another: how a distributed bench keeps ONE writer of the real store.

A Ray task (generate/ray_bench.py) runs `generate` against a private store file on its worker, then reads that
file's rows out (`dump_rows`, plain tuples: they pickle and travel through Ray's object store) and returns them;
the driver, the only process that opens the real store for writing, adds them in one transaction
(`merge_rows`): a problem's runs, candidates, builds, verdicts, timings, LLM turns and winner all land, or none.
Row ids are the receiving store's own (foreign keys are renumbered); a winner replaces the stored one for its
problem and toolchain, as `Store.record_winner` does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kerntailor.store.db import Store

# in insertion order: each table after the tables its foreign keys point to; "winners" is upserted, not inserted
TABLES = ("toolchains", "runs", "candidates", "builds", "verdicts", "timings", "winners", "llm_attempts",
          "llm_turns")
FOREIGN = {"candidates": {"run_id": "runs"}, "builds": {"candidate_id": "candidates"},
           "verdicts": {"candidate_id": "candidates"}, "timings": {"candidate_id": "candidates"},
           "winners": {"candidate_id": "candidates"}, "llm_attempts": {"run_id": "runs"},
           "llm_turns": {"attempt_id": "llm_attempts", "candidate_id": "candidates"}}

Dump = dict[str, tuple[tuple[str, ...], list[tuple]]]   # table -> (column names, rows)


def dump_rows(path: str | Path) -> Dump:
    """Every result row of the store file at `path` (read-only; rechecks are not a generate's results)."""
    conn = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True)
    try:
        out: Dump = {}
        for table in TABLES:
            columns = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
            order = "key" if table == "toolchains" else "id"
            out[table] = (columns, conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
                          .fetchall())
        return out
    finally:
        conn.close()


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
