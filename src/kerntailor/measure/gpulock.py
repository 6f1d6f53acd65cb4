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
import tempfile
from pathlib import Path

from filelock import FileLock


def lock_path(device) -> Path:
    import torch

    props = torch.cuda.get_device_properties(device)
    ident = str(getattr(props, "uuid", "") or f"{props.name}-{getattr(props, 'pci_bus_id', device)}")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in ident)
    return Path(tempfile.gettempdir()) / f"kerntailor-gpu-{safe}.lock"


@contextlib.contextmanager
def gpu_lock(device):
    """Hold the exclusive timing lock of `device` (a torch device) for the block."""
    path = lock_path(device)
    with FileLock(path, mode=0o666):   # 0o666: jobs of other users on the same GPU share it
        yield path
