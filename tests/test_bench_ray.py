"""`kerntailor bench --ray` (generate/ray_bench.py) on a local Ray cluster on the CPU, predicted for the MI300X:
two workers, one of them killed mid-run by a problem whose forward kills its process. The surviving problems'
rows equal a local bench's, the killed one is an error row naming the lost worker, and the store has one writer.
Skipped where Ray (the `ray` extra) is not installed; the store merge and the CLI's one-line refusal are tested
without it."""

import json
import shutil
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kerntailor.cli import optional_values
from kerntailor.generate import GenerateSettings
from kerntailor.generate.bench import bench

DATA = Path(__file__).parent / "data" / "codegen_fused"
KILLER = '''"""Standing in for a kernel that takes its process down: the forward kills whoever runs it."""
import os
import signal

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.kill(os.getpid(), signal.SIGKILL)
        return x + 1


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''
# what differs between two runs of the same problem: wall times, where it ran
TIMING = {"seconds", "admission_wait_s", "stage_s", "judge_phase_s", "worker"}


@pytest.fixture
def suite(tmp_path):
    level = tmp_path / "suite" / "level1"
    level.mkdir(parents=True)
    shutil.copy(DATA / "tiny_softmax.py", level)   # the library path's rows: test_a_job_lands_...
    return tmp_path / "suite"


@pytest.mark.integration
@pytest.mark.interpreter
@pytest.mark.slow
def test_ray_bench_equals_the_local_one_and_a_killed_worker_costs_one_row(suite, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    settings = GenerateSettings(target="mi300x", max_candidates=1, budget_s=20)
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "local-home"))
    bench(suite, replace(settings, out_dir=tmp_path / "local"))

    (suite / "level1" / "tiny_killer.py").write_text(KILLER)
    store_path = tmp_path / "driver" / "store.sqlite"
    # the workers' own default store would be here: it must stay unwritten (their store is private)
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "worker-home"))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        out = tmp_path / "ray"
        result = bench(suite, replace(settings, out_dir=out, store_path=store_path), ray="local")
    finally:
        ray.shutdown()

    rows = {r["problem"]: r for r in result["rows"]}
    assert [r["problem"] for r in result["rows"]] == ["tiny_killer", "tiny_softmax"]
    killed = rows.pop("tiny_killer")
    assert killed["status"] == "error" and killed["correct"] is False
    assert killed["error"].startswith("lost worker: worker ") and " pid " in killed["error"]
    assert killed["worker"] and killed["worker"] in killed["error"]
    # the survivor: the local bench's row (as bench.json holds both), but for wall times and where it ran
    written = {r["problem"]: r for r in json.loads((out / "bench.json").read_text())["rows"]}
    (theirs,) = json.loads((tmp_path / "local" / "bench.json").read_text())["rows"]
    assert written["tiny_softmax"]["worker"]
    assert _without(written["tiny_softmax"], TIMING) == _without(theirs, TIMING)
    assert rows["tiny_softmax"]["status"] == "generated" and rows["tiny_softmax"]["correct"]
    # the driver wrote the files a local bench writes, where it writes them (paths in them: under --out)
    ours = json.loads((out / "level1" / "tiny_softmax" / "report.json").read_text())
    local_report = json.loads((tmp_path / "local" / "level1" / "tiny_softmax" / "report.json").read_text())
    assert ours["verdict"]["candidate"] == str(out / "level1" / "tiny_softmax" / "kernel.py")
    assert set(ours) == set(local_report) and ours["kernels"] == local_report["kernels"]
    assert (out / "level1" / "tiny_softmax" / "kernel.py").read_text() == \
        (tmp_path / "local" / "level1" / "tiny_softmax" / "kernel.py").read_text()
    assert len((out / "bench.rows.jsonl").read_text().splitlines()) == 2
    # the survivor's journal landed beside its row (land appends journals: test below)
    journaled = {json.loads(line)["problem"] for line in (out / "bench.progress.jsonl").read_text().splitlines()}
    assert journaled == {"tiny_softmax"}
    assert result["summary"]["overall"]["correct"] == 1 and result["ray"] == "local"
    # one writer: each surviving problem's run came through the driver's merge once, finished; the killed job
    # left nothing (a worker writing the store itself would have left its run 'running'); no worker store
    with sqlite3.connect(store_path) as db:
        runs = db.execute("SELECT json_extract(problem, '$.name'), status, pid FROM runs").fetchall()
        winners = db.execute("SELECT json_extract(problem, '$.name') FROM winners").fetchall()
    assert [(name, status) for name, status, _ in runs] == [("tiny_softmax", "done")] and winners == [("tiny_softmax",)]
    assert rows["tiny_softmax"]["worker"].endswith(f"pid {runs[0][2]}")   # run by a worker, written by the driver
    assert not (tmp_path / "worker-home" / "store.sqlite").exists()


def _without(row: dict, keys: set) -> dict:
    return {k: v for k, v in row.items() if k not in keys}


@pytest.mark.integration
@pytest.mark.slow
def test_a_job_lands_its_rows_in_the_store_and_its_files_under_out(tmp_path, monkeypatch):
    """run_job and land without Ray: a worker's private store merged into the driver's, paths relocated."""
    from kerntailor.generate.ray_bench import land
    from kerntailor.store import Store
    from kerntailor.store.merge import dump_rows

    monkeypatch.setattr("kerntailor.generate.pipeline.detect_local_target", lambda: None)
    driver = Store(tmp_path / "driver.sqlite")
    job = _job(tmp_path / "w", DATA / "tiny_conv2d.py")
    for _ in range(2):   # twice: ids are the driver's own, the winner replaced, nothing duplicated
        row = land(job, tmp_path / "out", driver)
        assert row["status"] == "library" and job.scratch not in json.dumps(row)
    assert len(driver.runs()) == 2 and len(driver.winners()) == 1
    dumped = dump_rows(driver.path)
    assert len(dumped["candidates"][1]) == 2 and dumped["winners"][1][0][5] == driver.winners()[0].candidate.id
    report = (tmp_path / "out" / "level1" / "tiny_conv2d" / "report.json").read_text()
    assert job.scratch not in report
    # a worker that reads the driver's store (read-only) is served from it, as a local run would be
    served = _job(tmp_path / "w", DATA / "tiny_conv2d.py", shared_store=str(driver.path))
    assert served.row["served_from_store"] and served.row["status"] == "library"
    assert [t for t, (_, rows) in served.store_rows.items() if rows and t != "toolchains"] == ["runs"]
    land(served, tmp_path / "out", driver)
    assert [r.status for r in driver.runs()] == ["library", "library", "cached"] and len(driver.winners()) == 1
    driver.close()


def _job(scratch: Path, problem: Path, shared_store: str | None = None):
    """A JobResult as a worker makes it, of `problem` copied under `scratch`."""
    from kerntailor.generate.ray_bench import run_job

    level = scratch / "suite" / "level1"
    level.mkdir(parents=True, exist_ok=True)
    shutil.copy(problem, level)
    return run_job(level / problem.name, GenerateSettings(target="mi300x", max_candidates=1, budget_s=10),
                   shared_store)


def test_ray_without_the_extra_is_one_line_and_exit_2(tmp_path, monkeypatch):
    """--ray where Ray cannot be imported: refused before any work (CliRunner: the real command group)."""
    from typer.testing import CliRunner

    from kerntailor.cli import app

    def started(*a, **k):
        raise AssertionError("work started before the mistake was caught")

    monkeypatch.setitem(sys.modules, "ray", None)   # import ray raises ImportError
    monkeypatch.setattr("kerntailor.generate.bench.generate", started)
    result = CliRunner().invoke(app, ["bench", str(DATA), "--out", str(tmp_path / "o"), "--ray"])
    assert result.exit_code == 2 and result.stdout == "", (result.stdout, result.stderr)
    (line,) = result.stderr.splitlines()
    assert line.startswith("kerntailor: error: --ray needs Ray, which is not installed: pip install")
    assert not (tmp_path / "o" / "bench.json").exists()


def test_ray_with_no_address_means_a_local_ray():
    assert optional_values(["bench", "s", "--ray"]) == ["bench", "s", "--ray", "local"]
    assert optional_values(["bench", "s", "--ray", "-j", "2"]) == ["bench", "s", "--ray", "local", "-j", "2"]
    assert optional_values(["bench", "s", "--ray", "auto"]) == ["bench", "s", "--ray", "auto"]


def test_an_address_nothing_answers_on_is_refused_at_once():
    """ray.init would retry it for minutes; one line instead."""
    from kerntailor.errors import KerntailorError
    from kerntailor.generate.ray_bench import _check_reachable

    with pytest.raises(KerntailorError, match=r"--ray 127.0.0.1:1: nothing answers there"):
        _check_reachable("127.0.0.1:1")
    _check_reachable("auto")   # forms ray.init resolves itself pass through
    _check_reachable("local")


def test_landed_journals_are_appended_not_overwritten(tmp_path):
    """Every task writes its journal as bench.progress.jsonl in its own folder: landing two keeps both."""
    from kerntailor.generate.ray_bench import JobResult, land

    def job(problem: str, scratch: str) -> JobResult:
        line = json.dumps({"problem": problem, "stage": "queued", "done": None, "total": None, "t_s": 0.0}) + "\n"
        return JobResult({"problem": problem, "out": f"{scratch}/level1/{problem}"},
                         (("bench.progress.jsonl", line.encode()),), {}, scratch)

    rows = [land(job(p, f"/tmp/scratch-{p}"), tmp_path, None) for p in ("a", "b")]
    assert [r["out"] for r in rows] == [f"{tmp_path}/level1/a", f"{tmp_path}/level1/b"]
    lines = (tmp_path / "bench.progress.jsonl").read_text().splitlines()
    assert [json.loads(t)["problem"] for t in lines] == ["a", "b"]
