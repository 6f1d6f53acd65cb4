"""The LLM proposer's records: every attempt, request, reply, extracted kernel and verdict (schema v2).

    aid = record_llm_attempt(store, run_id, 1, model="qwen", base_url="http://localhost:8000/v1",
                             prompt_version="v1", settings={...})
    record_llm_turn(store, aid, LlmTurn(attempt=1, turn=1, messages=..., reply=..., ...))
    llm_turns(store, run_id)       # every turn of the run, in order: enough to audit it and to resume it

Functions over a Store (each write is one transaction, like the Store's own `record_*`), kept apart from
db.py so that the proposer's tables grow without touching the core store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kerntailor.store import codec
from kerntailor.store.connect import now as _now
from kerntailor.store.db import Store

OUTCOMES = ("no_code", "build", "static", "failed", "passed")


@dataclass(frozen=True)
class LlmAttempt:
    id: int
    run_id: int
    attempt: int
    model: str
    base_url: str
    prompt_version: str
    settings: dict
    created: str


@dataclass(frozen=True)
class LlmTurn:
    """One request and what came of it. Attempt 0, turn 0 is a user's seed kernel (no request)."""

    attempt: int
    turn: int
    messages: tuple[tuple[str, str], ...]   # (role, content) of the request
    reply: str
    outcome: str                  # one of OUTCOMES
    feedback: str                 # the facts the next turn's prompt gives back
    code: str | None = None       # the kernel module extracted from the reply
    error: str | None = None      # one line: why it did not pass
    verdict: Any = None           # the referee's Verdict, when it ran
    build: Any = None             # the build outcome (kerntailor.propose.build.BuildOutcome), when it ran
    median_us: float | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    request_s: float = 0.0
    judge_s: float = 0.0
    candidate_id: int | None = None
    kernel_path: str | None = field(default=None, compare=False)   # where the kernel was written (not stored)
    id: int | None = None
    created: str | None = None

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def record_llm_attempt(store: Store, run_id: int, attempt: int, *, model: str, base_url: str,
                       prompt_version: str, settings: dict) -> int:
    """The attempt's row id; recording the same attempt of a run again (a resume) returns the first."""
    with store._write() as c:
        c.execute("INSERT INTO llm_attempts (run_id, attempt, model, base_url, prompt_version, settings, created)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, attempt) DO NOTHING",
                  (run_id, attempt, model, base_url, prompt_version, json.dumps(settings, default=str), _now()))
        (aid,) = c.execute("SELECT id FROM llm_attempts WHERE run_id = ? AND attempt = ?",
                           (run_id, attempt)).fetchone()
        return int(aid)


def record_llm_turn(store: Store, attempt_id: int, t: LlmTurn) -> int:
    with store._write() as c:
        cur = c.execute(
            "INSERT INTO llm_turns (attempt_id, turn, messages, reply, finish_reason, code, candidate_id, outcome,"
            " error, feedback, build, verdict, median_us, prompt_tokens, completion_tokens, request_s, judge_s,"
            " created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (attempt_id, t.turn, json.dumps([{"role": r, "content": m} for r, m in t.messages]), t.reply,
             t.finish_reason, t.code, t.candidate_id, t.outcome, t.error, t.feedback, _encode(t.build),
             _encode(t.verdict), t.median_us, t.prompt_tokens, t.completion_tokens, t.request_s, t.judge_s, _now()))
        return int(cur.lastrowid)


def llm_attempts(store: Store, run_id: int) -> list[LlmAttempt]:
    rows = store._read("SELECT id, run_id, attempt, model, base_url, prompt_version, settings, created"
                       " FROM llm_attempts WHERE run_id = ? ORDER BY attempt", (run_id,))
    return [LlmAttempt(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7]) for r in rows]


def llm_turns(store: Store, run_id: int) -> list[LlmTurn]:
    """Every recorded turn of a run, by attempt then turn, with its verdict decoded."""
    rows = store._read(
        "SELECT a.attempt, t.turn, t.messages, t.reply, t.outcome, t.feedback, t.code, t.error, t.verdict,"
        " t.median_us, t.finish_reason, t.prompt_tokens, t.completion_tokens, t.request_s, t.judge_s,"
        " t.candidate_id, t.id, t.created, t.build FROM llm_turns t JOIN llm_attempts a ON a.id = t.attempt_id"
        " WHERE a.run_id = ? ORDER BY a.attempt, t.turn", (run_id,))
    out = []
    for r in rows:
        messages = tuple((m["role"], m["content"]) for m in json.loads(r[2]))
        out.append(LlmTurn(r[0], r[1], messages, r[3], r[4], r[5], code=r[6], error=r[7],
                           verdict=_decode(r[8]), median_us=r[9],
                           finish_reason=r[10], prompt_tokens=r[11], completion_tokens=r[12], request_s=r[13],
                           judge_s=r[14], candidate_id=r[15], id=r[16], created=r[17],
                           build=_decode(r[18])))
    return out


def _encode(value: Any) -> str | None:
    return None if value is None else codec.encode(value)


def _decode(text: str | None) -> Any:
    return None if text is None else codec.decode(text)
