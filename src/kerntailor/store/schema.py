"""The store's tables, and the guard that brings an older file up to date and refuses a newer one.

Every result column that holds a stage's type is tagged JSON (codec.py), so those types may grow fields
without a migration. A migration is needed only when a table or column changes: append the statements to
MIGRATIONS under the next version number and bump SCHEMA_VERSION; never edit a released version's list.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 2

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE schema_version (
            version INTEGER PRIMARY KEY,
            applied TEXT NOT NULL,        -- ISO 8601 UTC
            kerntailor TEXT NOT NULL      -- the version that applied it
        )""",
        """CREATE TABLE toolchains (
            key TEXT PRIMARY KEY,         -- Toolchain.key()
            data TEXT NOT NULL,           -- Toolchain.to_dict() as JSON
            first_seen TEXT NOT NULL
        )""",
        """CREATE TABLE runs (            -- one generate / bench / recheck invocation for one problem
            id INTEGER PRIMARY KEY,
            started TEXT NOT NULL,
            finished TEXT,
            command TEXT NOT NULL,
            problem_key TEXT NOT NULL,    -- ProblemKey.key()
            problem TEXT NOT NULL,        -- ProblemKey.to_dict() as JSON (name, path, hash, inputs, target)
            target TEXT NOT NULL,
            toolchain_key TEXT NOT NULL REFERENCES toolchains(key),
            status TEXT NOT NULL DEFAULT 'running',   -- running | done | failed | interrupted
            pid INTEGER,
            host TEXT
        )""",
        "CREATE INDEX runs_problem ON runs(problem_key, toolchain_key)",
        """CREATE TABLE candidates (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            key TEXT NOT NULL,            -- KernelSource.key(), or sha256 of the source text
            family TEXT NOT NULL,         -- pointwise | reduction | gemm | attention | conv | ... | raw
            config TEXT NOT NULL,         -- tagged JSON of the Config (what the search tuned)
            source TEXT NOT NULL,         -- Triton module text
            kernel TEXT,                  -- tagged JSON of the KernelSource, when there is one
            created TEXT NOT NULL,
            UNIQUE (run_id, key)
        )""",
        "CREATE INDEX candidates_key ON candidates(key)",
        """CREATE TABLE builds (
            id INTEGER PRIMARY KEY,
            candidate_id INTEGER NOT NULL REFERENCES candidates(id),
            target TEXT NOT NULL,
            ok INTEGER NOT NULL,
            usable INTEGER NOT NULL,      -- compiled and within the target's limits
            result TEXT NOT NULL,         -- tagged JSON of the BuildResult (no assembly text)
            created TEXT NOT NULL
        )""",
        "CREATE INDEX builds_candidate ON builds(candidate_id)",
        """CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            candidate_id INTEGER NOT NULL REFERENCES candidates(id),
            passed INTEGER NOT NULL,
            check_name TEXT,              -- the failed check, NULL when passed
            verdict TEXT NOT NULL,        -- tagged JSON of the Verdict
            created TEXT NOT NULL
        )""",
        "CREATE INDEX verdicts_candidate ON verdicts(candidate_id)",
        """CREATE TABLE timings (
            id INTEGER PRIMARY KEY,
            candidate_id INTEGER NOT NULL REFERENCES candidates(id),
            median_us REAL NOT NULL,
            label TEXT NOT NULL CHECK (label IN ('measured', 'predicted')),
            measurement TEXT NOT NULL,    -- tagged JSON of the Measurement / TimingReport / Timing
            created TEXT NOT NULL
        )""",
        "CREATE INDEX timings_candidate ON timings(candidate_id)",
        """CREATE TABLE winners (         -- the cache: a hit skips the search
            id INTEGER PRIMARY KEY,
            problem_key TEXT NOT NULL,
            toolchain_key TEXT NOT NULL REFERENCES toolchains(key),
            problem TEXT NOT NULL,        -- ProblemKey.to_dict() as JSON
            target TEXT NOT NULL,
            candidate_id INTEGER NOT NULL REFERENCES candidates(id),
            median_us REAL,
            label TEXT CHECK (label IN ('measured', 'predicted')),
            report TEXT NOT NULL,         -- tagged JSON of the report
            created TEXT NOT NULL,
            updated TEXT NOT NULL,
            UNIQUE (problem_key, toolchain_key)
        )""",
        """CREATE TABLE rechecks (        -- a stored winner re-verified and re-timed on another toolchain
            id INTEGER PRIMARY KEY,
            winner_id INTEGER NOT NULL REFERENCES winners(id),
            toolchain_key TEXT NOT NULL REFERENCES toolchains(key),
            passed INTEGER NOT NULL,
            old_median_us REAL,
            new_median_us REAL,
            label TEXT,
            regression INTEGER NOT NULL,
            reason TEXT NOT NULL,
            verdict TEXT NOT NULL,
            measurement TEXT,
            promoted_winner_id INTEGER REFERENCES winners(id),
            created TEXT NOT NULL
        )""",
        "CREATE INDEX rechecks_toolchain ON rechecks(toolchain_key, winner_id)",
    ),
    # the LLM proposer (kerntailor.propose): every request, reply, extracted kernel and verdict, so that a
    # run can be audited and resumed. A turn's kernel is also a row of `candidates` (family 'llm').
    2: (
        """CREATE TABLE llm_attempts (    -- one independent conversation (attempt 0: the user's seed kernel)
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            attempt INTEGER NOT NULL,
            model TEXT NOT NULL,          -- the model name sent to the endpoint ('seed' for a user's kernel)
            base_url TEXT NOT NULL,       -- the endpoint (never the API key)
            prompt_version TEXT NOT NULL, -- the prompt files used, e.g. 'v1'
            settings TEXT NOT NULL,       -- the ProposerSettings as JSON
            created TEXT NOT NULL,
            UNIQUE (run_id, attempt)
        )""",
        """CREATE TABLE llm_turns (       -- one request and its reply, the kernel extracted, and its verdict
            id INTEGER PRIMARY KEY,
            attempt_id INTEGER NOT NULL REFERENCES llm_attempts(id),
            turn INTEGER NOT NULL,
            messages TEXT NOT NULL,       -- the request's chat messages as JSON
            reply TEXT NOT NULL,          -- the reply text as received
            finish_reason TEXT,
            code TEXT,                    -- the kernel module extracted from the reply (NULL: none found)
            candidate_id INTEGER REFERENCES candidates(id),
            outcome TEXT NOT NULL,        -- no_code | build | static | failed | passed
            error TEXT,                   -- one line: why it did not pass
            feedback TEXT NOT NULL,       -- the facts the next turn's prompt gives back
            build TEXT,                   -- tagged JSON of the build outcome (probe + cross-compile, ISA facts)
            verdict TEXT,                 -- tagged JSON of the Verdict, when the referee ran
            median_us REAL,               -- the candidate's measured median, when timed
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            request_s REAL NOT NULL,      -- seconds waiting for the reply
            judge_s REAL NOT NULL,        -- seconds building, verifying and timing the kernel
            created TEXT NOT NULL,
            UNIQUE (attempt_id, turn)
        )""",
    ),
}

TABLES = ("schema_version", "toolchains", "runs", "candidates", "builds", "verdicts", "timings", "winners",
          "rechecks", "llm_attempts", "llm_turns")


def user_tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def current_version(conn: sqlite3.Connection) -> int | None:
    """The file's schema version: 0 for an empty file, None for an SQLite file that is not a store."""
    tables = user_tables(conn)
    if "schema_version" not in tables:
        return 0 if not tables else None
    (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(version)


def apply_migrations(conn: sqlite3.Connection, start: int, applied: str, kerntailor_version: str) -> None:
    """Run migrations start+1 .. SCHEMA_VERSION. The caller holds the write transaction."""
    for version in range(start + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[version]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version, applied, kerntailor) VALUES (?, ?, ?)",
                     (version, applied, kerntailor_version))
