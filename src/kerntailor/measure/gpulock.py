"""One stopwatch per GPU at a time: an exclusive file lock around every timed section.

`kerntailor bench --jobs N` runs several problems at once; their capture, builds, compiles and correctness
checks overlap, but two processes timing on one GPU would slow each other and both times would be wrong.
Every timed section (the stopwatch's timed rounds, the ceilings' measurement) and the referee's correctness
phase on a GPU hold this lock, keyed by the GPU's UUID so that processes seeing the same GPU under different
CUDA_VISIBLE_DEVICES indices still agree.
The lock is `filelock`'s FileLock on a file in the temp directory (on Linux an flock, released by the kernel if
the holder dies); filelock is a dependency of torch, declared in pyproject.toml too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

from filelock import FileLock


def lock_path(device) -> Path:
    import torch

    props = torch.cuda.get_device_properties(device)
    ident = str(getattr(props, "uuid", "") or f"{props.name}-{getattr(props, 'pci_bus_id', device)}")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in ident)
    return Path(tempfile.gettempdir()) / f"kerntailor-gpu-{safe}.lock"


LABEL_ENV = "KERNTAILOR_LOCK_LABEL"   # what a holder says it is (generate sets the problem's name: pipeline._start)


@contextlib.contextmanager
def gpu_lock(device):
    """Hold the exclusive timing lock of `device` (a torch device) for the block. While held, a note beside the
    lock file says who holds it (`holder`): a job that waits long can name what it waited for."""
    path = lock_path(device)
    with FileLock(path, mode=0o666):   # 0o666: jobs of other users on the same GPU share it
        note = _note_path(path)
        try:
            note.write_text(f"pid {os.getpid()} {os.environ.get(LABEL_ENV, '')} since {time.time():.1f}".strip())
        except OSError:   # the note is a diagnostic: the lock holds without it
            note = None
        try:
            yield path
        finally:
            if note is not None:
                note.unlink(missing_ok=True)


def holder(device) -> str:
    """Who holds `device`'s lock, as its note says ("pid N <label> since <unix time>"), "" when none is held (or
    the holder wrote no note); for the time waited behind it, the waiter's own clock."""
    try:
        text = _note_path(lock_path(device)).read_text().strip()
    except OSError:
        return ""
    if " since " not in text:
        return text[:200]
    who, since = text.rsplit(" since ", 1)
    try:
        return f"{who[:160]} (held {max(0.0, time.time() - float(since)):.0f} s)"
    except ValueError:
        return who[:200]


def _note_path(path: Path) -> Path:
    return path.with_name(path.name + ".holder")
