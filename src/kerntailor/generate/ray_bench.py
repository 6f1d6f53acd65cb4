"""`kerntailor bench SUITE --ray [ADDRESS]`: bench's problems as Ray tasks on a cluster, with ONE writer.

Each problem is one task, the job a local bench runs in `make_row`. On a cluster with GPUs a task asks for
one (`num_gpus=1`: Ray runs one job per GPU at a time and sets its CUDA_VISIBLE_DEVICES), where the referee
and the timing run; on a cluster without GPUs (predicted mode) it asks for one CPU, where the cross-compile and
the interpreter checks run. A task generates into a private folder and a private store file on its worker and
returns the row, the files and the store's rows (`JobResult`); only this process, the driver, writes the
bench's --out folder and the store (store/merge.py), so the store has one writer whatever the cluster's size,
and bench.json, bench.md and each problem's files are what a local bench writes (apart from the times and the
`worker` field). A task first streams who runs it (host, address, pid), then its result: a worker killed mid-job
(a kernel that takes its process down, the OOM killer, a lost node) costs that problem's row only, an error row
naming the lost worker, and the rest of the run completes. Tasks are never retried: a problem that killed one
worker would kill the next.

Ray is an optional extra (`pip install 'kerntailor[ray]'`), imported only when --ray is asked for. Workers must
import the same kerntailor and read the suite at the same path (one machine, a shared file system, or the same
checkout on every node). A worker that can read the driver's store (one machine, a shared file system) copies
the problem's stored winner from it, read-only, into its private store first, so a problem a local bench would
serve from the store is served here too; elsewhere it searches afresh.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from kerntailor.errors import KerntailorError
from kerntailor.generate.bench import PROGRESS_FILE, _row, append_row, make_row
from kerntailor.generate.pipeline import GenerateSettings

LOCAL = "local"   # --ray with no address: start a Ray instance on this machine for the run


@dataclass(frozen=True)
class JobResult:
    """What one task sends back: the row, each file it wrote under its private out folder (path relative to
    it, bytes), its private store's rows (store/merge.py) and that folder's path, to be replaced by --out."""

    row: dict
    files: tuple[tuple[str, bytes], ...]
    store_rows: dict
    scratch: str


def require_ray():
    """The ray module, or KerntailorError (one line, exit 2) where the extra is not installed."""
    try:
        import ray
    except ImportError:
        raise KerntailorError("--ray needs Ray, which is not installed: pip install 'kerntailor[ray]' "
                              "(or run without --ray)") from None
    return ray


def run_job(path: Path, settings: GenerateSettings, shared_store: str | None = None) -> JobResult:
    """One problem's row, generated into a private folder and store (what a Ray task runs on its worker);
    `shared_store`, the driver's store where this node can read it, serves a stored winner as a local run would."""
    from kerntailor.store.merge import dump_rows

    scratch = Path(tempfile.mkdtemp(prefix="kerntailor-ray-"))
    out, private = scratch / "out", scratch / "store.sqlite"
    job = replace(settings, out_dir=out, store_path=private)
    try:
        seeded = _seed(path, job, shared_store) if settings.use_store and shared_store else {}
        row = make_row(path, job)
        files = tuple((p.relative_to(out).as_posix(), p.read_bytes())
                      for p in sorted(out.rglob("*")) if p.is_file())
        return JobResult(row, files, dump_rows(private, after=seeded) if private.exists() else {}, str(out))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _seed(path: Path, job: GenerateSettings, shared_store: str) -> dict[str, int]:
    """Copy this problem's winner under this worker's toolchain from the driver's store (read-only) into the
    private one; returns the private store's last ids after it (nothing to send back up to them). A problem that
    fails to load is left to make_row, which makes its row."""
    from kerntailor.problem import load_problem
    from kerntailor.store import ProblemKey, Store, toolchain_fingerprint
    from kerntailor.store.merge import dump_winner, last_ids, merge_rows
    from kerntailor.targets import resolve_target

    if not Path(shared_store).is_file():   # another node, no shared file system: searched afresh
        return {}
    try:
        key = ProblemKey.of(load_problem(path, dtype=job.dtype), resolve_target(job.target), job.precision)
    except KerntailorError:
        return {}
    winner = dump_winner(shared_store, key.key(), toolchain_fingerprint().key())
    with Store(job.store_path) as private:
        if winner:
            merge_rows(private, winner)
    return last_ids(job.store_path)


def _task(path: str, settings: GenerateSettings, shared_store: str | None):
    """The Ray task: who runs it, then its JobResult (two items, so a worker lost mid-job is still named)."""
    yield f"{socket.gethostname()} ({_node_address()}) pid {os.getpid()}"
    yield run_job(Path(path), settings, shared_store)


def _node_address() -> str:
    import ray

    return ray.util.get_node_ip_address()


def land(job: JobResult, out_root: Path, store) -> dict:
    """Write a task's files under --out and its rows into the store, its private folder's path replaced by
    `out_root` (as given: a relative --out stays relative, as in a local bench's reports). Returns the row."""
    import json

    from kerntailor.store.merge import merge_rows

    def relocate(text: str) -> str:
        return text.replace(job.scratch, str(out_root))

    for rel, data in job.files:
        target = out_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            data = relocate(data.decode()).encode()
        except UnicodeDecodeError:   # a binary file: as written
            pass
        if rel == PROGRESS_FILE:   # every task's journal has this name: appended, one problem's lines after another's
            with open(target, "ab") as f:
                f.write(data)
            continue
        target.write_bytes(data)
    if store is not None and job.store_rows:
        merge_rows(store, job.store_rows, relocate)
    return json.loads(relocate(json.dumps(job.row, default=str)))


def lost_row(path: Path, worker: str | None, error: Exception, seconds: float) -> dict:
    """The error row of a problem whose worker died mid-job."""
    who = f"worker {worker}" if worker else "its worker (before it started)"
    first = (str(error).splitlines() or [""])[0]
    row = _row(path, path.parent.name, None, f"lost worker: {who} died mid-job ({type(error).__name__}: "
                                             f"{first})"[:300])
    return row | {"seconds": round(seconds, 1), "worker": worker}


def connect(address: str):
    """The ray module, connected: to a Ray instance started here for --ray local, else to the cluster at
    `address` ("auto": the one this machine belongs to). Returns (ray, whether this call started it)."""
    ray = require_ray()
    if ray.is_initialized():   # the caller's own session (tests, a notebook): used as it is
        return ray, False
    _check_reachable(address)
    quiet = {"log_to_driver": False, "logging_level": "ERROR"}
    try:
        if address == LOCAL:
            ray.init(include_dashboard=False, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise KerntailorError(f"--ray {address}: cannot connect to a Ray cluster there "
                              f"({' '.join(str(e).split())[:200]})") from None
    return ray, True


def _check_reachable(address: str) -> None:
    """KerntailorError (one line) when `address` names a host:port nothing answers on: ray.init itself retries
    such an address for minutes (measured 2026-12-03: still waiting after 120 s)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():   # local, auto, or a form ray.init reads its own way
        return
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as e:
        raise KerntailorError(f"--ray {address}: nothing answers there ({e.strerror or e}); start the cluster "
                              "(ray start --head) or give its address, or --ray alone for a Ray on this machine") \
            from None


def run_on_ray(paths: list[Path], settings: GenerateSettings, address: str = LOCAL,
               on_problem: Callable[[str, int, int], None] | None = None) -> list[dict]:
    """Every problem of `paths` as one Ray task; the rows in the order of `paths` (module docstring)."""
    out_root = Path(settings.out_dir)
    store = _open_store(settings)   # a damaged or read-only store: one line before Ray starts
    started = False
    try:
        ray, started = connect(address)
        resources = {"num_gpus": 1} if ray.cluster_resources().get("GPU", 0) >= 1 else {"num_cpus": 1}
        remote = ray.remote(max_retries=0, **resources)(_task)
        shared = str(Path(store.path).resolve()) if store is not None else None
        tasks = {remote.remote(str(path), settings, shared): path for path in paths}
        worker: dict = dict.fromkeys(tasks)
        began = dict.fromkeys(tasks, time.monotonic())
        rows: dict[Path, dict] = {}
        pending = list(tasks)
        while pending:
            (task,), pending = ray.wait(pending, num_returns=1)
            path = tasks[task]
            try:
                item = ray.get(next(task))
            except StopIteration:
                continue
            except ray.exceptions.RayTaskError as e:   # raised in the task outside make_row: a bug of ours
                first = (str(e.cause).splitlines() or [""])[0]
                rows[path] = _row(path, path.parent.name, None, f"internal error: {type(e.cause).__name__}: "
                                                                f"{first}"[:300])
                rows[path] |= {"seconds": round(time.monotonic() - began[task], 1), "worker": worker[task]}
            except ray.exceptions.RayError as e:   # the worker (or its node) is gone: this problem's row only
                rows[path] = lost_row(path, worker[task], e, time.monotonic() - began[task])
            else:
                if isinstance(item, str):   # who runs it; its result comes next
                    worker[task], began[task] = item, time.monotonic()
                    pending.append(task)
                    continue
                rows[path] = land(item, out_root, store) | {"worker": worker[task]}
            append_row(out_root, rows[path])
            if on_problem:
                on_problem(path.stem, len(rows) - 1, len(paths))
        return [rows[p] for p in paths]
    finally:
        if started:
            require_ray().shutdown()
        if store is not None:
            store.close()


def _open_store(settings: GenerateSettings):
    if not settings.use_store:
        return None
    from kerntailor.store import Store

    return Store(settings.store_path)
