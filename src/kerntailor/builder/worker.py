"""A build worker process: `python -m kerntailor.builder.worker`, driven by BuildPool over its stdin/stdout.

The protocol is pickled messages (multiprocessing.connection framing) on the two pipes: the worker
says ("ready",) once Triton is imported, then answers each job (index, kernel, target, keep_asm)
with (index, BuildResult, cacheable); None or end of input stops it. Whatever the compiler prints
goes to stderr, which the pool points at a log file (its last line explains a crash).
"""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection


def main() -> None:
    tool_timeout_s = float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "none" else None
    # Take the pipes for the protocol, then point fds 0/1 away so nothing else can write to them.
    jobs = Connection(os.dup(0), writable=False)
    replies = Connection(os.dup(1), readable=False)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.dup2(2, 1)

    import triton  # noqa: F401 - warm the import before saying ready

    from kerntailor.builder.compile import compile_here

    replies.send(("ready",))
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        os.ftruncate(2, 0)        # the log holds the current job's output only
        os.lseek(2, 0, os.SEEK_SET)
        index, kernel, target, keep_asm = job
        result, cacheable = compile_here(kernel, target, keep_asm=keep_asm, tool_timeout_s=tool_timeout_s)
        replies.send((index, result, cacheable))


if __name__ == "__main__":
    main()
