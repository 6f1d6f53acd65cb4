"""The sandbox of a process that runs candidate code: what it may see, reach and use.

Two halves, both standard library only (the candidate side runs before torch is imported):

- `scrubbed_env(...)`: the environment of every referee process, built from an explicit allow-list
  (ALLOWED_NAMES, ALLOWED_PREFIXES); names that look like credentials (DENIED_PARTS, DENIED_PREFIXES) never
  pass, whatever list they are on. `candidate_env(...)` adds the candidate's own temporary home.
- `enter_sandbox(spec)`: called first thing in a fresh, single-threaded candidate process. Each step is
  tried; what the system refuses is skipped and reported (SandboxReport), never fatal:
    1. it dies with its parent (PR_SET_PDEATHSIG), and exits if the parent is already gone;
    2. a user namespace when not root (so that the next steps need no privilege);
    3. a network namespace: no interface but a down loopback, so no connection anywhere;
    4. a mount namespace: a size-limited tmpfs as its home and working folder; the compiler caches as
       overlays (the real cache read-only below, writes kept in the tmpfs); credential files and folders of
       the real home hidden under empty mounts; every other mount (but /proc, /sys, /dev) remounted
       read-only, so nothing outside its home can be changed (no kernel.py, no store row, no source file);
    5. resource limits: CPU seconds, file size, no core files, address space (CPU mode: CUDA reserves
       terabytes of addresses, so no address-space limit on the GPU), process count (counted per user, so
       effective only when not root);
    6. no privileges: an empty capability bounding set, no capabilities, no new privileges (setuid binaries
       gain nothing); as root this also stops it from tracing or reading the memory of any process that
       holds capabilities (the CLI, the judge).
  The GPU stays reachable (/dev is left as it is) and Triton's compiler runs (writable caches, TMPDIR).

Its processes end with the judge: the launcher (launch.py) starts the judge as the first process of a PID
namespace, so when the judge exits every process in it (the candidate and anything it started, detached
or not) is killed by the kernel.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import resource
import signal
from dataclasses import asdict, dataclass, field

# --- the environment --------------------------------------------------------------------------------------

ALLOWED_NAMES = frozenset({
    "PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "LANG", "LANGUAGE", "TZ", "TERM",
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "CUDA_DEVICE_ORDER", "CUDA_MODULE_LOADING", "CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH",
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "CUBLAS_WORKSPACE_CONFIG",
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_NVML_BASED_CUDA_CHECK",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
})
ALLOWED_PREFIXES = ("TRITON_", "TORCHINDUCTOR_", "LC_")
# the referee's own processes (not the candidate's) also keep where the user's files and caches are
JUDGE_NAMES = frozenset({"HOME", "TMPDIR", "USER", "LOGNAME", "KERNTAILOR_HOME", "XDG_CACHE_HOME",
                         "KERNTAILOR_LOCK_LABEL"})   # the GPU lock's note of its holder (measure/gpulock.py)
DENIED_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
DENIED_PREFIXES = ("KERNTAILOR_LLM_", "AWS_", "SSH_", "GPG_", "GOOGLE_", "AZURE_", "OPENAI_", "ANTHROPIC_",
                   "HF_", "HUGGING", "GITHUB_", "GH_", "DOCKER_")

# credentials under a home folder: hidden from the candidate (tmpfs over folders, /dev/null over files)
CREDENTIAL_PATHS = (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker",
                    ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".cache/huggingface", ".huggingface",
                    ".bash_history", ".python_history", ".cache/kerntailor")


def denied(name: str) -> bool:
    """A variable that may hold a credential: never passed to a referee process."""
    upper = name.upper()
    return upper.startswith(DENIED_PREFIXES) or any(part in upper for part in DENIED_PARTS)


def scrubbed_env(source: dict[str, str] | None = None, *, judge: bool = False) -> dict[str, str]:
    """The allowed part of `source` (default os.environ); `judge` also keeps HOME, TMPDIR and the cache
    locations (the judge runs no candidate code)."""
    source = dict(os.environ if source is None else source)
    keep = {}
    for name, value in source.items():
        allowed = name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES) or (judge and name in JUDGE_NAMES)
        if allowed and not denied(name):
            keep[name] = value
    return keep


def candidate_env(judge_env: dict[str, str], home: str, *, interpreter: bool,
                  inductor_cache: str | None) -> dict[str, str]:
    """The candidate process's environment: the allow-list, its own home, TMPDIR and caches."""
    env = scrubbed_env(judge_env)
    env.update(HOME=home, TMPDIR=os.path.join(home, "tmp"), XDG_CACHE_HOME=os.path.join(home, ".cache"),
               PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    if inductor_cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache
    # torch.compile's baseline (measure/baselines.py) compiles a handful of kernels: in this process, not through a
    # pool of one worker per CPU that imports torch each (the default), which parallel bench jobs multiply
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    if interpreter:
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return env


# --- the spec, on the judge's side --------------------------------------------------------------------------

CPU_MEMORY_BYTES = 8 << 30   # address space under the interpreter (VmPeak of a verification run: ~0.8 GiB)


def _real_caches(home: str) -> tuple[list[tuple[str, str]], str | None]:
    """The compiler caches the candidate sees through overlays, [(mount point, real cache)], and the torch
    inductor cache folder to point it at (None: a private one in its home)."""
    import getpass
    import tempfile

    triton = os.environ.get("TRITON_CACHE_DIR")
    caches = [(triton, triton)] if triton else \
        [(os.path.join(home, ".triton", "cache"), os.path.join(os.path.expanduser("~"), ".triton", "cache"))]
    inductor = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not inductor:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = f"uid_{os.getuid()}"
        inductor = os.path.join(tempfile.gettempdir(), f"torchinductor_{user}")
    if not os.path.isdir(inductor):
        return caches, None
    return caches + [(inductor, inductor)], inductor


def _credential_paths() -> list[str]:
    """CREDENTIAL_PATHS under this user's homes ($HOME and the password database's), and KERNTAILOR_HOME."""
    import pwd

    homes = {os.path.expanduser("~")}
    try:
        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    paths = [os.path.join(h, p) for h in sorted(homes) for p in CREDENTIAL_PATHS]
    kt_home = os.environ.get("KERNTAILOR_HOME")
    return paths + ([kt_home] if kt_home else [])


def _python_path() -> str:
    """PYTHONPATH for the candidate: this kerntailor first, this process's PYTHONPATH, and the user's site
    folder when it is in use (the candidate's HOME moves, so it is named explicitly)."""
    import site
    import sys

    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds kerntailor/
    parts = [src] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != src]
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and user_site in sys.path and os.path.isdir(user_site):
        parts.append(user_site)
    return os.pathsep.join(parts)


def sandbox_for(home, *, parent_pid: int, gpu: bool, cpu_seconds: int) -> tuple[SandboxSpec, dict[str, str]]:
    """The spec and the environment of a candidate process whose private home will be `home` (created here,
    empty); called by the process that starts it (the judge, the build probe's caller)."""
    home = str(home)
    os.makedirs(home, mode=0o700)
    caches, inductor = _real_caches(home)
    spec = SandboxSpec(home=home, parent_pid=parent_pid, gpu=gpu, cpu_seconds=cpu_seconds,
                       memory_bytes=None if gpu else CPU_MEMORY_BYTES, hide=tuple(_credential_paths()),
                       caches=tuple(caches), private_shm=not gpu)
    env = candidate_env(dict(os.environ), home, interpreter=not gpu, inductor_cache=inductor)
    env["PYTHONPATH"] = _python_path()
    return spec, env


# --- the candidate side ------------------------------------------------------------------------------------

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": 1024,
                "nodiratime": 2048, "relatime": 1 << 21, "strictatime": 1 << 24}
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 28, 38, 47
SECURE_NOROOT_ALL = 0x2F   # NOROOT, NO_SETUID_FIXUP and KEEP_CAPS, each locked: uid 0 gains nothing by exec
LEFT_AS_THEY_ARE = ["/proc", "/sys", "/dev"]   # mounts not made read-only: the kernel's views and the GPU


@dataclass(frozen=True)
class SandboxSpec:
    """What the judge asks of the candidate process's sandbox (JSON in the candidate's spec file)."""

    home: str                          # an empty folder: becomes a private tmpfs, HOME, TMPDIR's parent, cwd
    parent_pid: int                    # the judge: the candidate dies with it
    gpu: bool = False
    cpu_seconds: int = 1200            # RLIMIT_CPU per process
    memory_bytes: int | None = 8 << 30  # RLIMIT_AS (None: no limit; the GPU's driver needs the address space)
    file_bytes: int = 1 << 30          # RLIMIT_FSIZE: its log, its home
    home_bytes: int = 1 << 30          # size of the tmpfs home
    processes: int = 4096              # RLIMIT_NPROC (counted per real user: not effective for root)
    hide: tuple[str, ...] = ()         # credential paths (files or folders) to hide
    caches: tuple[tuple[str, str], ...] = ()   # (mount point, real cache below it): overlays
    private_shm: bool = True           # a private /dev/shm (the GPU keeps the shared one: CUDA IPC uses it)


@dataclass(frozen=True)
class SandboxReport:
    """What `enter_sandbox` achieved, step by step, in words (JSON back to the judge)."""

    network: str = "shared"
    filesystem: str = "shared"
    privileges: str = "kept"
    limits: str = "none"
    user: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def isolated(self) -> bool:
        return self.network == "none" and self.filesystem.startswith("read-only")

    def to_json(self) -> dict:
        return asdict(self)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL when the parent dies; exit now if it already has (the check closes the race)."""
    _call(_libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
    if parent_pid and os.getppid() != parent_pid:
        os._exit(70)


def _enter_user_namespace() -> str:
    """Map this (non-root) user to root of a new user namespace: namespaces without privilege."""
    uid, gid = os.geteuid(), os.getegid()
    _call(_libc().unshare(CLONE_NEWUSER), "unshare(user)")
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"0 {gid} 1")
    return f"user {uid} (a user namespace)"


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _call(_libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def _mountinfo() -> list[tuple[str, list[str]]]:
    """(mount point, per-mount options) of every mount, in the order the kernel lists them."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4])   # \040: a space
            out.append((point, parts[5].split(",")))
    return out


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _overlay(point: str, lower: str, home: str, index: int, userns: bool) -> str:
    """The real cache `lower` read-only under `point`, its writes kept in the tmpfs `home`; where overlays are
    refused, a private empty cache (a tmpfs over `point` when it lies outside the home)."""
    upper, work = (os.path.join(home, ".overlay", str(index), sub) for sub in ("upper", "work"))
    os.makedirs(upper)
    os.makedirs(work)
    os.makedirs(point, exist_ok=True)
    if os.path.isdir(lower) and not any(c in lower + upper + work for c in ",:\\"):
        options = f"lowerdir={lower},upperdir={upper},workdir={work}"
        for extra in ((",userxattr", "") if userns else ("",)):
            try:
                _mount("overlay", point, "overlay", 0, options + extra)
                return "overlay"
            except OSError:
                continue
    if not _inside(point, [home]):
        _mount("tmpfs", point, "tmpfs", MS_NOSUID | MS_NODEV, "size=1g,mode=0755")
    return "private"


def _filesystem(spec: SandboxSpec, userns: bool, notes: list[str]) -> str:
    """Step 4 (see the module docstring). Returns the filesystem line of the report."""
    _call(_libc().unshare(CLONE_NEWNS), "unshare(mount)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", spec.home, "tmpfs", MS_NOSUID | MS_NODEV, f"size={spec.home_bytes},mode=0700")
    for sub in ("tmp", ".cache"):
        os.makedirs(os.path.join(spec.home, sub), exist_ok=True)
    ours = [spec.home]
    kinds = []
    for i, (point, lower) in enumerate(spec.caches):
        try:
            kinds.append(_overlay(point, lower, spec.home, i, userns))
            ours.append(point)
        except OSError as e:
            notes.append(f"cache {point}: {e}")
    hidden = 0
    for path in spec.hide:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755")
            elif os.path.isfile(path):
                _mount("/dev/null", path, None, MS_BIND)
            else:
                continue
            ours.append(path)
            hidden += 1
        except OSError as e:
            notes.append(f"could not hide {path}: {e}")
    if spec.private_shm and os.path.isdir("/dev/shm"):
        try:
            _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
        except OSError as e:
            notes.append(f"/dev/shm stays shared: {e}")
    failed = []
    for point, options in _mountinfo():
        if "ro" in options or _inside(point, ours) or _inside(point, LEFT_AS_THEY_ARE):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for opt in options:
            flags |= _MOUNT_FLAGS.get(opt, 0)
        try:
            _mount(None, point, None, flags)
        except OSError as e:
            failed.append(f"{point} ({errno.errorcode.get(e.errno, e.errno)})")
    caches = f"caches {'/'.join(sorted(set(kinds)))}" if kinds else "no compiler cache"
    line = f"read-only but its home (tmpfs), {caches}, {hidden} credential path(s) hidden"
    if failed:
        notes.append("still writable: " + ", ".join(failed[:5]))
        line = "partly read-only: " + line
    return line


def _limits(spec: SandboxSpec) -> str:
    """Step 5: set what can be set; the line says what holds."""
    said = []
    pairs = [(resource.RLIMIT_CPU, spec.cpu_seconds, f"{spec.cpu_seconds} s CPU"),
             (resource.RLIMIT_FSIZE, spec.file_bytes, f"files ≤ {spec.file_bytes >> 20} MiB"),
             (resource.RLIMIT_CORE, 0, "")]
    if spec.memory_bytes:
        pairs.append((resource.RLIMIT_AS, spec.memory_bytes, f"{spec.memory_bytes >> 30} GiB address space"))
    pairs.append((resource.RLIMIT_NPROC, spec.processes,
                  f"{spec.processes} processes per user" if _real_uid() != 0 else
                  "processes not counted (root: no per-user limit applies)"))
    for kind, value, text in pairs:
        try:
            _soft, hard = resource.getrlimit(kind)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (cap, cap if kind != resource.RLIMIT_CPU else hard))
            if text:
                said.append(text)
        except (ValueError, OSError):
            continue
    if not spec.memory_bytes:
        said.append("no memory limit (GPU)")
    return ", ".join(said) or "none"


def _real_uid() -> int:
    """The uid outside every user namespace (0: root, whose process count no rlimit bounds)."""
    try:
        with open("/proc/self/uid_map") as f:
            first = f.read().split()
        return int(first[1]) if first and first[0] == "0" else os.getuid()
    except (OSError, IndexError, ValueError):
        return os.getuid()


def _drop_privileges() -> str:
    """Step 6: no capabilities now or after any exec, no new privileges."""
    libc = _libc()
    libc.prctl(PR_SET_SECUREBITS, SECURE_NOROOT_ALL, 0, 0, 0)   # needs CAP_SETPCAP: before the drop
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, 4, 0, 0, 0)   # PR_CAP_AMBIENT_CLEAR_ALL
    _call(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    _call(libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()), "capset")
    return "no capabilities, no new privileges"


def enter_sandbox(spec: SandboxSpec) -> SandboxReport:
    """Apply every step of the module docstring to this process; what the system refuses is reported."""
    notes: list[str] = []
    die_with_parent(spec.parent_pid)
    userns, user = False, "root" if os.geteuid() == 0 else f"user {os.geteuid()}"
    if os.geteuid() != 0:
        try:
            user, userns = _enter_user_namespace(), True
        except OSError as e:
            notes.append(f"no user namespace ({e}): namespaces need privilege")
    network = "shared"
    try:
        _call(_libc().unshare(CLONE_NEWNET), "unshare(network)")
        network = "none"
    except OSError as e:
        notes.append(f"network: {e}")
    filesystem = "shared"
    try:
        filesystem = _filesystem(spec, userns, notes)
    except OSError as e:
        notes.append(f"filesystem: {e}")
        os.makedirs(os.path.join(spec.home, "tmp"), exist_ok=True)
    limits = _limits(spec)
    privileges = "kept"
    try:
        privileges = _drop_privileges()
    except OSError as e:
        notes.append(f"privileges: {e}")
    die_with_parent(spec.parent_pid)   # credential changes clear the parent-death signal: set it again
    os.chdir(spec.home)
    return SandboxReport(network, filesystem, privileges, limits, user, tuple(notes))


def report_line(report: SandboxReport | dict, pid_namespace: bool) -> str:
    """One line for the verdict: "sandboxed: ..." or "unsandboxed: ..." with what is missing."""
    r = report if isinstance(report, SandboxReport) else SandboxReport(**{k: tuple(v) if k == "notes" else v
                                                                         for k, v in report.items()})
    processes = ("its processes end with the judge (PID namespace)" if pid_namespace else
                 "no PID namespace: processes it detaches may outlive it")
    parts = [f"network {r.network}", f"filesystem {r.filesystem}", processes, r.privileges, f"limits: {r.limits}"]
    head = "sandboxed" if r.isolated and pid_namespace else "unsandboxed"
    missing = [] if head == "sandboxed" else [n for n in r.notes][:2]
    return f"{head}: " + "; ".join(parts) + ("; " + "; ".join(missing) if missing else "")


def spec_from_json(text: str) -> SandboxSpec:
    data = json.loads(text)
    data["hide"] = tuple(data.get("hide", ()))
    data["caches"] = tuple(tuple(c) for c in data.get("caches", ()))
    return SandboxSpec(**data)
