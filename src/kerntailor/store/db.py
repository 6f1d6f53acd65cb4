"""The result store: one SQLite file, WAL mode, one transaction per result.

    store = Store()                                   # $KERNTAILOR_HOME/store.sqlite or ~/.cache/kerntailor/
    hit = store.lookup_winner(problem_key, toolchain.key())
    run = store.start_run("generate", problem_key, toolchain)
    cid = store.record_candidate(run, kernel, family="gemm", config=config)
    store.record_build(cid, build_result); store.record_verdict(cid, verdict); store.record_timing(cid, t)
    store.record_winner(cid, report=report); store.finish_run(run)

Durability: every `record_*` is one `BEGIN IMMEDIATE … COMMIT`, so a process killed at any moment leaves
every result it returned from and loses at most the one in flight; WAL keeps the file readable throughout.
`synchronous=FULL` fsyncs the log at each commit: a result costs seconds of compile and GPU time, so the
fsync (about a millisecond) is noise, and the results then also survive a power cut or a node reset, which a
kernel that hangs the GPU can cause (NORMAL would keep the file consistent but could drop the last commits).
`BEGIN IMMEDIATE` takes the write lock up front, so a second writer waits out `busy_timeout` instead of
failing on a read-to-write upgrade. Open one Store per process (and per thread); never share one over fork.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from kerntailor.store import codec
from kerntailor.store.connect import BUSY_TIMEOUT_S, StoreError, connect, default_store_path, hold, sqlite_message
from kerntailor.store.connect import now as _now
from kerntailor.store.keys import ProblemKey, Toolchain
from kerntailor.store.records import (
    REGRESSION_THRESHOLD,
    Candidate,
    Recheck,
    Run,
    StoredBuild,
    StoredTiming,
    StoredVerdict,
    TrainingRow,
    Winner,
)

LABELS = ("measured", "predicted")


class Store:
    """Every candidate, build, verdict, timing and winner, keyed by problem + target + toolchain."""

    def __init__(self, path: str | os.PathLike | None = None, *, busy_timeout_s: float = BUSY_TIMEOUT_S):
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self._conn = connect(self.path, busy_timeout_s)
        self._held = hold(self, self.path)   # while open, this process never closes another fd of the file

    # ---- plumbing

    def close(self) -> None:
        self._conn.close()
        self._held()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it is committed, or none of it."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise StoreError(sqlite_message(e, self.path)) from None
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise StoreError(sqlite_message(exc, self.path)) from None
            raise

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(sqlite_message(e, self.path)) from None

    def integrity_check(self) -> str:
        """SQLite's full check: "ok", or what is wrong."""
        return "; ".join(str(r[0]) for r in self._read("PRAGMA integrity_check"))

    @staticmethod
    def _put_toolchain(conn: sqlite3.Connection, toolchain: Toolchain) -> str:
        key = toolchain.key()
        conn.execute("INSERT OR IGNORE INTO toolchains (key, data, first_seen) VALUES (?, ?, ?)",
                     (key, json.dumps(toolchain.to_dict()), _now()))
        return key

    def toolchain(self, key: str) -> Toolchain | None:
        rows = self._read("SELECT data FROM toolchains WHERE key = ?", (key,))
        return Toolchain.from_dict(json.loads(rows[0][0])) if rows else None

    # ---- writes: each is one transaction and returns the new row's id

    def start_run(self, command: str, problem: ProblemKey, toolchain: Toolchain) -> int:
        with self._write() as c:
            tkey = self._put_toolchain(c, toolchain)
            cur = c.execute(
                "INSERT INTO runs (started, command, problem_key, problem, target, toolchain_key, status, pid, host)"
                " VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (_now(), command, problem.key(), json.dumps(problem.to_dict()), problem.target, tkey,
                 os.getpid(), platform.node()))
            return int(cur.lastrowid)

    def finish_run(self, run_id: int, status: str = "done") -> None:
        with self._write() as c:
            c.execute("UPDATE runs SET finished = ?, status = ? WHERE id = ?", (_now(), status, run_id))

    def record_candidate(self, run_id: int, kernel: Any = None, *, family: str, config: Any = None,
                         source: str | None = None, key: str | None = None) -> int:
        """A proposed candidate: a KernelSource (its key and source are taken from it) or raw `source`.
        Recording the same key twice in one run returns the first row's id."""
        if kernel is not None:
            source = kernel.source if source is None else source
            key = key or kernel.key()
        if source is None:
            raise ValueError("record_candidate needs a KernelSource or the source text")
        if key is None:
            key = hashlib.sha256(source.encode()).hexdigest()
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO candidates (run_id, key, family, config, source, kernel, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, key) DO NOTHING",
                (run_id, key, family, codec.encode(config), source,
                 None if kernel is None else codec.encode(kernel), _now()))
            if cur.rowcount == 1:
                return int(cur.lastrowid)
            (cid,) = c.execute("SELECT id FROM candidates WHERE run_id = ? AND key = ?", (run_id, key)).fetchone()
            return int(cid)

    def record_build(self, candidate_id: int, result: Any) -> int:
        """A BuildResult (its assembly text is not kept)."""
        if hasattr(result, "asm") and result.asm:
            result = replace(result, asm={})
        usable = getattr(result, "usable", getattr(result, "ok", False))
        with self._write() as c:
            cur = c.execute("INSERT INTO builds (candidate_id, target, ok, usable, result, created)"
                            " VALUES (?, ?, ?, ?, ?, ?)",
                            (candidate_id, str(getattr(result, "target", "")), int(bool(result.ok)),
                             int(bool(usable)), codec.encode(result), _now()))
            return int(cur.lastrowid)

    def record_verdict(self, candidate_id: int, verdict: Any) -> int:
        with self._write() as c:
            cur = c.execute("INSERT INTO verdicts (candidate_id, passed, check_name, verdict, created)"
                            " VALUES (?, ?, ?, ?, ?)",
                            (candidate_id, int(bool(verdict.passed)), getattr(verdict, "check", None),
                             codec.encode(verdict), _now()))
            return int(cur.lastrowid)

    def record_timing(self, candidate_id: int, measurement: Any, *, median_us: float | None = None,
                      label: str | None = None) -> int:
        """A timing: `label` "measured" (on the GPU) or "predicted" (cost model); by default what the
        measurement says (a `label` field), else "measured"."""
        median_us = _median_us(measurement) if median_us is None else float(median_us)
        label = label or _field(measurement, "label") or "measured"
        if label not in LABELS:
            raise ValueError(f"timing label must be one of {LABELS}, not {label!r}")
        with self._write() as c:
            cur = c.execute("INSERT INTO timings (candidate_id, median_us, label, measurement, created)"
                            " VALUES (?, ?, ?, ?, ?)",
                            (candidate_id, median_us, label, codec.encode(measurement), _now()))
            return int(cur.lastrowid)

    def record_winner(self, candidate_id: int, *, report: Any = None, median_us: float | None = None,
                      label: str | None = None) -> int:
        """Make a verified candidate the cache entry for its run's problem and toolchain (replacing any).
        The time defaults to the candidate's latest timing. A candidate with no passing verdict is refused."""
        with self._write() as c:
            row = c.execute("SELECT r.problem_key, r.problem, r.target, r.toolchain_key FROM candidates k"
                            " JOIN runs r ON r.id = k.run_id WHERE k.id = ?", (candidate_id,)).fetchone()
            if row is None:
                raise StoreError(f"no candidate {candidate_id} in store {self.path}")
            if not c.execute("SELECT 1 FROM verdicts WHERE candidate_id = ? AND passed = 1",
                             (candidate_id,)).fetchone():
                raise StoreError(f"candidate {candidate_id} has no passing verdict; only verified kernels win")
            if median_us is None:
                t = c.execute("SELECT median_us, label FROM timings WHERE candidate_id = ? ORDER BY id DESC"
                              " LIMIT 1", (candidate_id,)).fetchone()
                if t is not None:
                    median_us, label = t[0], label or t[1]
            return self._upsert_winner(c, row[0], row[3], row[1], row[2], candidate_id, median_us,
                                       label or "measured", codec.encode(report))

    @staticmethod
    def _upsert_winner(c, problem_key, toolchain_key, problem_json, target, candidate_id, median_us, label,
                       report_json) -> int:
        now = _now()
        c.execute(
            "INSERT INTO winners (problem_key, toolchain_key, problem, target, candidate_id, median_us, label,"
            " report, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (problem_key, toolchain_key) DO UPDATE SET candidate_id = excluded.candidate_id,"
            " median_us = excluded.median_us, label = excluded.label, report = excluded.report,"
            " updated = excluded.updated",
            (problem_key, toolchain_key, problem_json, target, candidate_id, median_us, label, report_json,
             now, now))
        (wid,) = c.execute("SELECT id FROM winners WHERE problem_key = ? AND toolchain_key = ?",
                           (problem_key, toolchain_key)).fetchone()
        return int(wid)

    def record_recheck(self, winner: Winner, verdict: Any, timing: Any = None, *, toolchain: Toolchain,
                       median_us: float | None = None, label: str | None = None,
                       threshold: float = REGRESSION_THRESHOLD) -> Recheck:
        """The outcome of re-verifying and re-timing `winner` on `toolchain`. A regression: it now fails,
        or it is slower than the stored time by more than `threshold` (same label only). A pass that is
        no regression becomes the winner under `toolchain` too, so the next lookup there hits."""
        passed = bool(verdict.passed)
        new_us = None
        if timing is not None or median_us is not None:
            new_us = _median_us(timing) if median_us is None else float(median_us)
            label = label or _field(timing, "label") or "measured"
        old_us = winner.median_us
        regression, reason = _judge(passed, verdict, old_us, new_us, winner.label, label, threshold)
        with self._write() as c:
            tkey = self._put_toolchain(c, toolchain)
            promoted = None
            if passed and not regression:
                report = {"rechecked_from": winner.toolchain_key, "reason": reason,
                          "report": codec.plain(winner.report)}
                promoted = self._upsert_winner(
                    c, winner.problem_key, tkey, json.dumps(winner.problem.to_dict()), winner.target,
                    winner.candidate.id, new_us if new_us is not None else old_us,
                    label if new_us is not None else winner.label, codec.encode(report))
            created = _now()
            cur = c.execute(
                "INSERT INTO rechecks (winner_id, toolchain_key, passed, old_median_us, new_median_us, label,"
                " regression, reason, verdict, measurement, promoted_winner_id, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (winner.id, tkey, int(passed), old_us, new_us, label, int(regression), reason,
                 codec.encode(verdict), None if timing is None else codec.encode(timing), promoted, created))
            return Recheck(int(cur.lastrowid), winner.id, tkey, passed, old_us, new_us, label, regression,
                           reason, promoted, created)

    # ---- queries

    def run(self, run_id: int) -> Run | None:
        rows = self._read(f"SELECT {_RUN_COLS} FROM runs WHERE id = ?", (run_id,))
        return _run(rows[0]) if rows else None

    def runs(self) -> list[Run]:
        return [_run(r) for r in self._read(f"SELECT {_RUN_COLS} FROM runs ORDER BY id")]

    def candidate(self, candidate_id: int) -> Candidate | None:
        rows = self._read(f"SELECT {_CAND_COLS} FROM candidates WHERE id = ?", (candidate_id,))
        return _candidate(rows[0]) if rows else None

    def candidates_for(self, run_id: int) -> list[Candidate]:
        rows = self._read(f"SELECT {_CAND_COLS} FROM candidates WHERE run_id = ? ORDER BY id", (run_id,))
        return [_candidate(r) for r in rows]

    def builds_for(self, candidate_id: int) -> list[StoredBuild]:
        rows = self._read("SELECT id, candidate_id, target, ok, usable, result, created FROM builds"
                          " WHERE candidate_id = ? ORDER BY id", (candidate_id,))
        return [StoredBuild(r[0], r[1], r[2], bool(r[3]), bool(r[4]), codec.decode(r[5]), r[6]) for r in rows]

    def verdicts_for(self, candidate_id: int) -> list[StoredVerdict]:
        rows = self._read("SELECT id, candidate_id, passed, check_name, verdict, created FROM verdicts"
                          " WHERE candidate_id = ? ORDER BY id", (candidate_id,))
        return [StoredVerdict(r[0], r[1], bool(r[2]), r[3], codec.decode(r[4]), r[5]) for r in rows]

    def timings_for(self, candidate_id: int) -> list[StoredTiming]:
        rows = self._read("SELECT id, candidate_id, median_us, label, measurement, created FROM timings"
                          " WHERE candidate_id = ? ORDER BY id", (candidate_id,))
        return [StoredTiming(r[0], r[1], r[2], r[3], codec.decode(r[4]), r[5]) for r in rows]

    def lookup_winner(self, problem_key: ProblemKey | str, toolchain_key: Toolchain | str) -> Winner | None:
        """The cache hit that skips the search: the winner for this problem+target under this toolchain."""
        pkey = problem_key.key() if isinstance(problem_key, ProblemKey) else problem_key
        tkey = toolchain_key.key() if isinstance(toolchain_key, Toolchain) else toolchain_key
        rows = self._winner_rows("w.problem_key = ? AND w.toolchain_key = ?", (pkey, tkey))
        return rows[0] if rows else None

    def winners(self, *, toolchain_key: str | None = None, target: str | None = None) -> list[Winner]:
        """Every stored winner (optionally under one toolchain or for one target), oldest first."""
        where, args = ["1"], []
        if toolchain_key is not None:
            where.append("w.toolchain_key = ?")
            args.append(toolchain_key)
        if target is not None:
            where.append("w.target = ?")
            args.append(target)
        return self._winner_rows(" AND ".join(where), tuple(args))

    def stale_winners(self, current: Toolchain | str) -> list[Winner]:
        """What `recheck` must look at: per problem, the latest winner from another toolchain, where the
        problem has no winner under `current` and that winner has not been rechecked under it yet."""
        tkey = current.key() if isinstance(current, Toolchain) else current
        current_problems = {r[0] for r in self._read("SELECT problem_key FROM winners WHERE toolchain_key = ?",
                                                     (tkey,))}
        rechecked = {r[0] for r in self._read("SELECT winner_id FROM rechecks WHERE toolchain_key = ?", (tkey,))}
        latest: dict[str, Winner] = {}
        for w in self._winner_rows("w.toolchain_key != ?", (tkey,)):
            if w.problem_key not in current_problems:
                if w.problem_key not in latest or (w.updated, w.id) > (latest[w.problem_key].updated,
                                                                       latest[w.problem_key].id):
                    latest[w.problem_key] = w
        return [w for w in latest.values() if w.id not in rechecked]

    def rechecks(self, *, toolchain_key: str | None = None, regressions_only: bool = False) -> list[Recheck]:
        where, args = ["1"], []
        if toolchain_key is not None:
            where.append("toolchain_key = ?")
            args.append(toolchain_key)
        if regressions_only:
            where.append("regression = 1")
        rows = self._read("SELECT id, winner_id, toolchain_key, passed, old_median_us, new_median_us, label,"
                          " regression, reason, promoted_winner_id, created FROM rechecks"
                          f" WHERE {' AND '.join(where)} ORDER BY id", tuple(args))
        return [Recheck(r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6], bool(r[7]), r[8], r[9], r[10])
                for r in rows]

    def training_rows(self, target: str, *, toolchain_key: str | None = None) -> list[TrainingRow]:
        """Measured (never predicted) timings on `target`, with each candidate's config and ISA facts."""
        sql = ("SELECT k.id, k.family, k.config, t.median_us, r.problem_key, r.toolchain_key,"
               " (SELECT b.result FROM builds b WHERE b.candidate_id = k.id AND b.target = r.target"
               "  AND b.usable = 1 ORDER BY b.id DESC LIMIT 1)"
               " FROM timings t JOIN candidates k ON k.id = t.candidate_id JOIN runs r ON r.id = k.run_id"
               " WHERE t.label = 'measured' AND r.target = ?")
        args: tuple = (target,)
        if toolchain_key is not None:
            sql += " AND r.toolchain_key = ?"
            args += (toolchain_key,)
        out = []
        for cid, family, config, median_us, pkey, tkey, build in self._read(sql + " ORDER BY t.id", args):
            config_data = codec.decode_parts(config)[1]
            facts = None
            if build is not None:
                facts = (codec.decode_parts(build)[1] or {}).get("facts")
            out.append(TrainingRow(cid, family, config_data if isinstance(config_data, dict) else
                                   {"value": config_data}, facts, median_us, pkey, tkey))
        return out

    def _winner_rows(self, where: str, args: tuple) -> list[Winner]:
        rows = self._read(
            "SELECT w.id, w.problem_key, w.toolchain_key, w.problem, w.target, w.median_us, w.label, w.report,"
            f" w.created, w.updated, {_CAND_COLS_K} FROM winners w JOIN candidates k ON k.id = w.candidate_id"
            f" WHERE {where} ORDER BY w.id", args)
        return [Winner(r[0], r[1], r[2], ProblemKey.from_dict(json.loads(r[3])), r[4], r[5], r[6],
                       codec.decode(r[7]), _candidate(r[10:]), r[8], r[9]) for r in rows]


_RUN_COLS = "id, started, finished, command, problem_key, problem, target, toolchain_key, status"
_CAND_COLS = "id, run_id, key, family, config, source, kernel, created"
_CAND_COLS_K = ", ".join(f"k.{c.strip()}" for c in _CAND_COLS.split(","))


def _run(r: tuple) -> Run:
    return Run(r[0], r[1], r[2], r[3], r[4], ProblemKey.from_dict(json.loads(r[5])), r[6], r[7], r[8])


def _candidate(r: tuple) -> Candidate:
    return Candidate(r[0], r[1], r[2], r[3], codec.decode(r[4]), r[5], codec.decode(r[6]), r[7])


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _median_us(m: Any) -> float:
    """Microseconds from a Measurement-like value: median_us, median_s, or a TimingReport's candidate."""
    for name, scale in (("median_us", 1.0), ("median_s", 1e6)):
        v = _field(m, name)
        if v is not None:
            return float(v) * scale
    if hasattr(m, "timing"):  # measure.TimingReport
        t = m.timing("candidate")
        if t is not None:
            return float(t.median_s) * 1e6
    raise ValueError(f"cannot read a median time from {type(m).__name__}; pass median_us=")


def _judge(passed: bool, verdict: Any, old_us: float | None, new_us: float | None, old_label: str | None,
           new_label: str | None, threshold: float) -> tuple[bool, str]:
    if not passed:
        check = _field(verdict, "check") or "verify"
        return True, f"now fails: {check}: {_field(verdict, 'reason') or ''}".rstrip(": ")
    if new_us is None or old_us is None or old_us <= 0:
        return False, "ok (passes; not timed)"
    change = new_us / old_us - 1.0
    line = f"{old_us:.1f} → {new_us:.1f} µs ({change:+.0%})"
    if old_label != new_label:
        return False, f"ok (passes; {old_label} vs {new_label} times not compared: {line})"
    if change > threshold:
        return True, f"slower: {line}"
    return False, f"ok: {line}"
