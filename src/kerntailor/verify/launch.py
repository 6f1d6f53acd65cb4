"""Start a referee process so that it, and everything it starts, dies with the CLI.

    python -m kerntailor.verify.launch PARENT_PID -- COMMAND ARGS...

This process (standard library only) dies with PARENT_PID (PR_SET_PDEATHSIG; it exits at once if PARENT_PID
is already gone), makes a PID namespace (inside a user namespace when not root), and runs COMMAND as its
first process, with a /proc of that namespace. The kernel ends every process of a PID namespace when its
first process exits or is killed, so when COMMAND (the judge, or the build probe) finishes, times out or is
killed, nothing it or a candidate started survives: not a detached (setsid) child, not a process that
cleared its own parent-death signal. The chain of deaths is the kernel's: CLI -> this launcher
(parent-death signal) -> COMMAND (parent-death signal) -> the whole namespace.

Where the system refuses namespaces, COMMAND runs as a plain child (it still dies with this launcher) and
sees KERNTAILOR_PIDNS=0 in its environment, so that its report can say so.

`start` and `stop` are the caller's side (the CLI's): start COMMAND through this launcher, and end it with
everything it started.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
EXIT_ORPHANED = 70


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _user_namespace() -> bool:
    uid, gid = os.geteuid(), os.getegid()
    if _libc().unshare(CLONE_NEWUSER) != 0:
        return False
    try:
        for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"0 {uid} 1"),
                           ("/proc/self/gid_map", f"0 {gid} 1")):
            with open(path, "w") as f:
                f.write(text)
    except OSError:
        return False
    return True


def _own_proc() -> None:
    """A mount namespace whose /proc shows this PID namespace only (outer processes, and their environment
    variables, are not even listed). Best effort: the PID namespace does the killing either way."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0:
        return
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return
    libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)


def start(command: list[str], *, env: dict[str, str], log, pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
    """Start `command` through the launcher, as a child of this process (in its own process group)."""
    return subprocess.Popen([sys.executable, "-m", "kerntailor.verify.launch", str(os.getpid()), "--", *command],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, pass_fds=pass_fds,
                            env=env, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    """Kill the launcher and its process group; the command's PID namespace dies with the launcher."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def exit_description(code: int) -> str:
    """How the launched command ended, from the launcher's exit status: "exit N" or "signal N"."""
    if code < 0:
        return f"signal {-code}"
    return f"signal {code - 128}" if code > 128 else f"exit {code}"


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m kerntailor.verify.launch PARENT_PID -- COMMAND ARGS...", file=sys.stderr)
        return 2
    parent, command = int(argv[0]), argv[2:]
    libc = _libc()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        return EXIT_ORPHANED
    if os.geteuid() != 0:
        _user_namespace()
    pid_namespace = libc.unshare(CLONE_NEWPID) == 0
    env = dict(os.environ, KERNTAILOR_PIDNS="1" if pid_namespace else "0")
    alive_r, alive_w = os.pipe()   # closed only by this process's death: the child's check of the race
    pid = os.fork()
    if pid == 0:
        try:
            os.close(alive_w)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if select.select([alive_r], [], [], 0)[0]:   # EOF: the launcher died before the line above
                os._exit(EXIT_ORPHANED)
            os.close(alive_r)
            if pid_namespace:
                _own_proc()
            os.execvpe(command[0], command, env)
        finally:
            os._exit(127)
    os.close(alive_r)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
