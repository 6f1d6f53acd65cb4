"""Opening the store file safely: where it lives, what is refused, WAL, and the schema guard.

Nothing is written to a file until it is known to be an SQLite file with a kerntailor schema no newer than
this code's, whose pages pass SQLite's quick_check (or an empty/new file): a corrupt, damaged, foreign or newer
store is reported in one line and left exactly as it was.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
import time
import weakref
from pathlib import Path

from kerntailor.errors import KerntailorError
from kerntailor.store import schema

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 30.0
MOVE = "move it away or set KERNTAILOR_HOME to another directory"


class StoreError(KerntailorError):
    """The store file cannot be opened or written: corrupt, not a store, newer schema, read-only, busy."""


def default_store_path() -> Path:
    """`$KERNTAILOR_HOME/store.sqlite`, else `~/.cache/kerntailor/store.sqlite` (read at call time)."""
    home = os.environ.get("KERNTAILOR_HOME")
    root = Path(home).expanduser() if home else Path(os.path.expanduser("~/.cache/kerntailor"))
    return root / "store.sqlite"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def kerntailor_version() -> str:
    import kerntailor

    return kerntailor.__version__


# The store files this process holds open through a Store, by (device, inode): how many Stores. SQLite's locks on a
# file are POSIX locks, which belong to the process, and a close() of ANY descriptor of that file drops them all,
# SQLite's included (sqlite.org/howtocorrupt.html, 2.2). So this process never opens and closes a file that a Store
# of its own holds: check_path's header read is skipped for it (SQLite opened it; it reports what changed since).
# Without the locks, another process that closes its connection takes itself for the last one, checkpoints and
# deletes the -wal and -shm under this process's open connections: on the H200 (2026-12-03, `bench --jobs 2`), every
# later problem of one worker failed with "disk I/O error", then "is corrupt (file is not a database)", and writes
# were lost, while the file itself was sound.
_HELD: dict[tuple[int, int], int] = {}


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def hold(owner: object, path: Path) -> weakref.finalize:
    """Count the store at `path` as held by this process while `owner` (a Store) lives; call the returned
    finalizer when it closes (it runs once, at the latest when `owner` is collected)."""
    key = _file_id(path)
    if key is not None:
        _HELD[key] = _HELD.get(key, 0) + 1
    return weakref.finalize(owner, _release, key)


def _release(key: tuple[int, int] | None) -> None:
    if key in _HELD:
        _HELD[key] -= 1
        if _HELD[key] <= 0:
            del _HELD[key]


def check_path(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that is not a store or cannot be written."""
    if path.is_dir():
        raise StoreError(f"store path {path} is a directory; pass a file path or {MOVE}")
    if path.exists():
        head = b""
        if _file_id(path) not in _HELD:   # never close a descriptor of a file our own Store holds (_HELD)
            try:
                with open(path, "rb") as f:
                    head = f.read(len(SQLITE_MAGIC))
            except OSError as e:
                raise StoreError(f"cannot read store {path}: {e.strerror}; {MOVE}") from None
        if head and head != SQLITE_MAGIC:
            raise StoreError(f"{path} is not an SQLite file (corrupt or foreign; left untouched); {MOVE}")
        if not os.access(path, os.R_OK | os.W_OK):
            raise StoreError(f"store {path} is read-only; make it writable or set KERNTAILOR_HOME elsewhere")
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create store directory {path.parent}: {e.strerror}; "
                             "set KERNTAILOR_HOME to a writable directory") from None
    if not os.access(path.parent, os.W_OK | os.X_OK):  # WAL needs its -wal and -shm files beside the store
        raise StoreError(f"store directory {path.parent} is read-only; set KERNTAILOR_HOME to a writable "
                         "directory")


def sqlite_message(e: sqlite3.Error, path: Path) -> str:
    """One line that says what went wrong with the store file and what to do."""
    text = str(e)
    low = text.lower()
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return f"store {path} is corrupt ({text}); move it away (its results are lost) and run again"
    if "readonly" in low or "read-only" in low:
        return f"store {path} is read-only ({text}); set KERNTAILOR_HOME to a writable directory"
    if "locked" in low or "busy" in low:
        return f"store {path} stayed locked by another process ({text}); try again when it has finished"
    if "full" in low:
        return f"store {path}: disk full ({text}); free space and run again"
    return f"store {path}: {text}"


def _newer(path: Path, version: int) -> str:
    return (f"store {path} has schema version {version}, newer than this kerntailor {kerntailor_version()} "
            f"reads ({schema.SCHEMA_VERSION}); upgrade kerntailor, or set KERNTAILOR_HOME to another "
            "directory (the file is left as it is)")


def _not_a_store(path: Path) -> str:
    return f"{path} is an SQLite file but not a kerntailor store; {MOVE}"


def connect(path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """An open connection to the store at `path`, in WAL mode with the current schema.

    isolation_level=None: the Store issues BEGIN IMMEDIATE / COMMIT itself, one transaction per result.
    """
    check_path(path)
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
    except sqlite3.Error as e:
        raise StoreError(sqlite_message(e, path)) from None
    try:
        _prepare(conn, path, busy_timeout_s)
    except sqlite3.Error as e:
        conn.close()
        raise StoreError(sqlite_message(e, path)) from None
    except BaseException:
        conn.close()
        raise
    return conn


# stores this process has found sound, by (path, size, mtime): quick_check reads the whole file, so it runs once
# per process and file state (bench opens the store once per problem)
_CHECKED: set[tuple[str, int, int]] = set()


def check_sound(conn: sqlite3.Connection, path: Path) -> None:
    """StoreError (one line) when SQLite's quick_check finds the file damaged: a corrupt page of a table or an
    index that the queries would otherwise read as missing rows, without a word. Only reads."""
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _CHECKED:
        return
    try:
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as e:   # a page too damaged for the check itself to read
        problems = [str(e)]
    if problems != ["ok"]:
        first = " ".join(problems[0].split())[:200]
        raise StoreError(f"store {path} is damaged ({first}); nothing was written to it. Save what can be read "
                         f"(sqlite3 {path} .recover > store.sql), then {MOVE}")
    if key is not None:
        _CHECKED.add(key)


def _prepare(conn: sqlite3.Connection, path: Path, busy_timeout_s: float) -> None:
    version = schema.current_version(conn)  # a read: a corrupt file fails here, before any write
    if version is None:
        raise StoreError(_not_a_store(path))
    if version > schema.SCHEMA_VERSION:
        raise StoreError(_newer(path, version))
    if version:
        check_sound(conn, path)   # reads only: a damaged store is never written to
    deadline = time.monotonic() + busy_timeout_s
    while True:  # switching a new file to WAL needs a moment alone with it; a second opener waits
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    if str(mode).lower() != "wal":
        raise StoreError(f"store {path}: the file system refused WAL mode ({mode}); put the store on a "
                         "local disk (KERNTAILOR_HOME)")
    # FULL, not NORMAL: see db.py's docstring (a result costs seconds; its fsync, a millisecond).
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    if version == schema.SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:  # re-read under the write lock: another process may have migrated meanwhile
        version = schema.current_version(conn)
        if version is None:
            raise StoreError(_not_a_store(path))
        if version > schema.SCHEMA_VERSION:
            raise StoreError(_newer(path, version))
        schema.apply_migrations(conn, version, now(), kerntailor_version())
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
