"""One stopwatch per GPU at a time: an exclusive file lock around every timed section.

`kerntailor bench --jobs N` runs several problems at once; their capture, builds, compiles and correctness
checks overlap, but two processes timing on one GPU would slow each other and both times would be wrong.
Every timed section (the stopwatch's timed rounds, the ceilings' measurement) holds this lock exclusively; the
referee's correctness cases, edge cases among them, hold it shared: several jobs' correctness work at once, never
beside a timed section. (Held exclusively, the correctness work of six jobs queued behind one another: on the H100
a level-2 judge waited 150 s of its 167 s, 2026-12-06; and with edge cases still exclusive, one 3-d transposed
convolution's stretched case held it past 200 s while two jobs waited the whole time, the same day. A stretched
edge case's memory is not within its job's reservation, measure/memory.py, which counts the default sizes: one
that runs out of GPU memory beside other jobs' cases is judged again holding the lock alone, judge_edges.py.)
It is keyed by the GPU's UUID so that processes seeing the same GPU under different CUDA_VISIBLE_DEVICES indices
still agree.

The lock is an flock on a file in the temp directory (released by the kernel if the holder dies), behind a
turnstile (a second flock, held exclusively while a holder waits for the lock): a job waiting for the exclusive
lock makes the shared holders that come after it wait behind it, so a stream of correctness work cannot starve a
timing. A process never waits for the lock while it holds it (the judge takes it once per step, none nested).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import tempfile
import time
from pathlib import Path


def lock_path(device) -> Path:
    import torch

    props = torch.cuda.get_device_properties(device)
    ident = str(getattr(props, "uuid", "") or f"{props.name}-{getattr(props, 'pci_bus_id', device)}")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in ident)
    return Path(tempfile.gettempdir()) / f"kerntailor-gpu-{safe}.lock"


LABEL_ENV = "KERNTAILOR_LOCK_LABEL"   # what a holder says it is (generate sets the problem's name: pipeline._start)


@contextlib.contextmanager
def gpu_lock(device, shared: bool = False):
    """Hold `device`'s (a torch device's) lock for the block: exclusively (timing), or `shared`
    (correctness work, beside other shared holders only). While held, a note beside the lock file says who holds it
    (`holder`): a job that waits long can name what it waited for."""
    path = lock_path(device)
    with _flock(path.with_name(path.name + ".turn"), fcntl.LOCK_EX):   # in line behind any exclusive waiter
        held = _flock(path, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        held.__enter__()
    try:
        who = " ".join(w for w in (f"pid {os.getpid()}", os.environ.get(LABEL_ENV, "").strip(),
                                   "(shared)" if shared else "") if w)
        with _note(path, f"{who} since {time.time():.1f}"):
            yield path
    finally:
        held.__exit__(None, None, None)


@contextlib.contextmanager
def _flock(path: Path, how: int):
    """An flock of `how` on `path` (made 0o666: jobs of other users on the same GPU share it) for the block."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        with contextlib.suppress(OSError):   # another user's file: its mode is theirs to set
            os.fchmod(fd, 0o666)
        fcntl.flock(fd, how)
        yield fd
    finally:
        os.close(fd)   # closing releases the flock


NOTE = ".holder."   # a holder's note: <lock file>.holder.<random>, flocked by its writer while the lock is held


@contextlib.contextmanager
def _note(path: Path, text: str):
    """A note of `text` beside the lock for the block, one per holder (shared holders are several at once; judges
    in their own PID namespaces all have pid 1), flocked while it is true: the note of a holder that died (SIGKILL:
    no unlink) is unlocked, and `holder` drops it. Written under another name and renamed once flocked, so that
    `holder` never takes a note being written for a dead one's."""
    token = secrets.token_hex(6)
    note, fd = path.with_name(path.name + NOTE + token), None
    try:
        draft = path.with_name(f"{path.name}.draft.{token}")
        fd = os.open(draft, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, text.encode())
        os.rename(draft, note)
    except OSError:   # the note is a diagnostic: the lock holds without it
        if fd is not None:
            os.close(fd)
            with contextlib.suppress(OSError):
                draft.unlink(missing_ok=True)
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                note.unlink(missing_ok=True)
            os.close(fd)


def holder(device) -> str:
    """Who holds `device`'s lock, as the holders' notes say ("pid N <label> (held S s)", oldest first, "; "
    between), "" when none is held (or no holder wrote a note); for the time waited behind it, the waiter's own
    clock."""
    path = lock_path(device)
    found = []
    for note in path.parent.glob(path.name + NOTE + "*"):
        try:
            fd = os.open(note, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                note.unlink(missing_ok=True)   # nobody holds it: its writer died holding the lock
                continue
            except BlockingIOError:
                text = os.read(fd, 4096).decode(errors="replace").strip()
        except OSError:
            continue
        finally:
            os.close(fd)
        who, _, since = text.rpartition(" since ")
        try:
            found.append((float(since), f"{who[:160]} (held {max(0.0, time.time() - float(since)):.0f} s)"))
        except ValueError:
            found.append((float("inf"), text[:200]))
    return "; ".join(text for _, text in sorted(found)[:3])
