"""The measured search's persistent worker (generate/evaluate.py GpuWorker, gpu_bench.serve): one process serves a
search's batches with its set-up kept, a candidate's failure is its record, a hang or a death ends the process and
the next batch starts another. Run here on the CPU (the job's "device"); on a GPU the same code runs on "cuda"."""

from __future__ import annotations

import json
import textwrap

import pytest

from kerntailor.generate.evaluate import GpuWorker

pytestmark = pytest.mark.integration

PROBLEM = '''
import torch
import torch.nn as nn

N = 64


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N, N)]


def get_init_inputs():
    return []
'''


def candidate(tmp_path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(f'''
        import torch
        import torch.nn as nn

        class ModelNew(nn.Module):
            def forward(self, x):
                {body}
        '''))
    return str(path)


def records(out) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_one_process_serves_batches_with_its_set_up_kept(tmp_path):
    problem = tmp_path / "relu64.py"
    problem.write_text(PROBLEM)
    wrong = candidate(tmp_path, "wrong", "return x * 2")
    raises = candidate(tmp_path, "raises", "raise ValueError('no kernel here')")
    noisy = candidate(tmp_path, "noisy", "print('done'); print('done'); return x * 2")   # stdout is not the protocol
    job = {"problem": str(problem), "dtype": None, "precision": "ieee", "device": "cpu"}
    worker = GpuWorker()
    try:
        first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        assert worker.run({**job, "candidates": [wrong, raises]}, first, 120) == ""
        pid = worker.proc.pid
        assert worker.run({**job, "candidates": [noisy, wrong]}, second, 120) == ""
        assert worker.proc.pid == pid   # the same process
        head, *rest = records(first)
        assert head["reused"] is False and head["setup_s"] > 0
        assert [r["path"] for r in rest] == [wrong, raises] and not any(r["ok"] for r in rest)
        assert rest[0]["error"].startswith("wrong result on the default inputs") and rest[0]["rel_err"] > 0.1
        assert rest[1]["error"] == "ValueError: no kernel here"
        head, *rest = records(second)
        assert head == {"setup_s": 0.0, "reused": True}
        assert [r["path"] for r in rest] == [noisy, wrong]
        assert all(r["error"].startswith("wrong result") for r in rest)
        other = tmp_path / "other.jsonl"   # another problem: another set-up, in another process
        assert worker.run({**job, "problem": str(problem), "dtype": "bf16", "candidates": [wrong]}, other, 120) == ""
        assert worker.proc.pid != pid and records(other)[0]["reused"] is False
    finally:
        worker.close()
    assert worker.proc is None


def test_a_hang_is_a_timeout_and_a_death_keeps_the_records_before_it(tmp_path):
    problem = tmp_path / "relu64.py"
    problem.write_text(PROBLEM)
    wrong = candidate(tmp_path, "wrong", "return x * 2")
    hangs = candidate(tmp_path, "hangs", "import time; time.sleep(600)")
    dies = candidate(tmp_path, "dies", "import os; os._exit(3)")
    job = {"problem": str(problem), "dtype": None, "precision": "ieee", "device": "cpu"}
    worker = GpuWorker()
    try:
        warm = tmp_path / "warm.jsonl"
        assert worker.run({**job, "candidates": [wrong]}, warm, 120) == ""   # the set-up, outside the short timeout
        hung = tmp_path / "hung.jsonl"
        assert worker.run({**job, "candidates": [wrong, hangs]}, hung, 5) == "timeout after 5s"
        assert worker.proc is None
        assert [r.get("path") for r in records(hung)[1:]] == [wrong]   # the one before the hang
        died = tmp_path / "died.jsonl"
        assert worker.run({**job, "candidates": [wrong, dies, wrong]}, died, 120) == ""
        assert worker.proc is None   # it died mid-batch: closed, the next batch starts another
        assert [r.get("path") for r in records(died)[1:]] == [wrong]
        again = tmp_path / "again.jsonl"
        assert worker.run({**job, "candidates": [wrong]}, again, 120) == ""
        assert records(again)[0]["reused"] is False and len(records(again)) == 2
    finally:
        worker.close()
