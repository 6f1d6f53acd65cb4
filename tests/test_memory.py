"""Admission of parallel jobs by GPU memory (measure/memory.py): the estimate's terms, the ledger's waiting,
dead jobs' reservations dropped, and a job too big for the GPU refused in one line."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from kerntailor.measure.memory import CONTEXT_BYTES, job_need, reserve
from kerntailor.problem import load_problem

DATA = Path(__file__).parent / "data" / "module_trees"


def test_job_need_counts_the_problems_tensors():
    need = job_need(load_problem(DATA / "resnet_style.py"))
    assert need.inputs == 16 * 40 * 4
    # Layer 1: 40 -> 48 (weight, bias, shift buffer); layer 2: 48 -> 32; head 32 -> 24
    assert need.parameters == 4 * (48 * 40 + 48 + 48 + 32 * 48 + 32 + 32 + 24 * 32 + 24)
    assert need.outputs == 16 * 24 * 4
    assert need.total > 2 * CONTEXT_BYTES + 2 * (need.inputs + need.parameters + need.outputs)


def test_too_big_for_the_gpu_is_refused(tmp_path):
    with pytest.raises(MemoryError, match=r"needs about 12\.0 GB of GPU memory .* the GPU has 10\.0 GB usable"):
        with reserve(12_000_000_000, 10_000_000_000, tmp_path / "ledger.json"):
            pass


def _hold(ledger: str, need: int, capacity: int, log: str, seconds: float) -> None:
    with reserve(need, capacity, Path(ledger), poll_s=0.05):
        with open(log, "a") as f:
            f.write(f"start {os.getpid()} {time.monotonic()}\n")
        time.sleep(seconds)
        with open(log, "a") as f:
            f.write(f"end {os.getpid()} {time.monotonic()}\n")


@pytest.mark.integration   # three job processes
def test_a_job_waits_while_the_running_ones_hold_the_memory(tmp_path):
    ledger, log = str(tmp_path / "ledger.json"), str(tmp_path / "log")
    ctx = mp.get_context("fork")
    first = ctx.Process(target=_hold, args=(ledger, 6, 10, log, 1.0))
    first.start()
    while not Path(log).exists():
        time.sleep(0.01)
    second = ctx.Process(target=_hold, args=(ledger, 6, 10, log, 0.0))   # 6 + 6 > 10: must wait
    third = ctx.Process(target=_hold, args=(ledger, 4, 10, log, 0.0))    # 6 + 4 <= 10: runs beside the first
    second.start()
    third.start()
    for p in (first, second, third):
        p.join(30)
    events = [line.split() for line in Path(log).read_text().splitlines()]
    when = {(kind, int(pid)): float(t) for kind, pid, t in events}
    assert when[("start", second.pid)] >= when[("end", first.pid)]
    assert when[("start", third.pid)] < when[("end", first.pid)]
    assert json.loads(Path(ledger).read_text()) == {}


def test_a_dead_jobs_reservation_is_dropped(tmp_path):
    ledger = tmp_path / "ledger.json"
    dead = mp.get_context("fork").Process(target=time.sleep, args=(0,))
    dead.start()
    dead.join()
    ledger.write_text(json.dumps({str(dead.pid): 9}))
    started = time.monotonic()
    with reserve(9, 10, ledger, poll_s=0.05):
        assert json.loads(ledger.read_text()) == {str(os.getpid()): 9}
    assert time.monotonic() - started < 5
