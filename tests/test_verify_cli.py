"""`kerntailor verify`: exit 0 on pass, 1 on a failed check (one-line reason), 2 on a file that cannot load.
Interpreter tier (each run starts a worker under TRITON_INTERPRET=1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kerntailor.cli import app

HERE = Path(__file__).parent / "candidates"
RELU = str(HERE / "problems" / "relu_small.py")
runner = CliRunner()


def verify(*args: str):
    return runner.invoke(app, ["verify", *args, "--device", "cpu", "--timeout", "60"])


@pytest.mark.interpreter
def test_pass_exits_0_and_json_is_the_verdict():
    r = verify(RELU, str(HERE / "ok_relu.py"), "--json", "--variant", "odd")
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    assert v["passed"] is True and v["check"] is None and v["mode"] == "cpu interpreter"
    # three regular draws, then the special-values draw (NaN, Inf, signed zeros) on the smallest variant judged,
    # then the edge cases from it (verify/edges.py): ok_relu answers each, a row past 2^20 on sizes of its own
    draws = [c["draw"] for c in v["cases"]]
    assert draws == ["normal", "uniform", "outliers", "special", "edge:rank+1", "edge:rank-1", "edge:bf16",
                     "edge:rows"]
    assert [c["variant"] for c in v["cases"]] == ["odd"] * 7 + ["odd+dim=1048579"]
    assert all(c["refused"] is None for c in v["cases"])
    assert [s.split(" ")[0] for s in v["edges_skipped"]] == ["edge:int32"]
    assert "accuracy" in v["checks"] and "unwritten" in v["checks"] and v["checks"][-1] == "edges"


@pytest.mark.interpreter
def test_failed_check_exits_1_with_the_reason_first(tmp_path):
    cand = tmp_path / "raises.py"
    cand.write_text("import torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        raise ValueError('no kernel yet')\n")
    r = verify(RELU, str(cand), "--variant", "small")
    assert r.exit_code == 1, r.output
    first = r.output.splitlines()[0]
    assert first.startswith("FAIL [exception]") and "ValueError: no kernel yet" in first


@pytest.mark.interpreter
def test_candidate_that_cannot_import_exits_2(tmp_path):
    cand = tmp_path / "broken_import.py"
    cand.write_text("import torch.nn as nn\nimport not_a_module_anywhere\n\nclass ModelNew(nn.Module):\n    pass\n")
    r = verify(RELU, str(cand), "--allow-library")
    assert r.exit_code == 2
    assert "not_a_module_anywhere" in r.output and "Traceback" not in r.output


def test_bad_files_exit_2_without_a_worker(tmp_path):
    bad = tmp_path / "syntax.py"
    bad.write_text("class ModelNew(:\n")
    r = verify(RELU, str(bad))
    assert r.exit_code == 2 and "syntax error" in r.output
    r = verify(str(tmp_path / "no_problem.py"), str(HERE / "ok_relu.py"))
    assert r.exit_code == 2 and "cannot read" in r.output
    r = verify(RELU, str(HERE / "ok_relu.py"), "--draws", "2")   # refused by the parser: its range is 3..100
    assert r.exit_code == 2 and "'--draws'" in r.output and "3" in r.output


def test_static_failure_exits_1_fast():
    r = verify(str(HERE / "problems" / "softmax_rows.py"), str(HERE / "cheat_torch_op.py"))
    assert r.exit_code == 1
    assert r.output.startswith("FAIL [static]") and "torch.softmax" in r.output.splitlines()[0]


@pytest.mark.interpreter
def test_allow_library_switches_the_observed_check_off_too():
    """cheat_getattr_op calls torch's softmax by a spelling the static check cannot read: the observed check
    fails it (exit 1, check library, the operator named); --allow-library lets it through (exit 0)."""
    softmax = str(HERE / "problems" / "softmax_rows.py")
    r = verify(softmax, str(HERE / "cheat_getattr_op.py"), "--variant", "small")
    assert r.exit_code == 1 and r.output.startswith("FAIL [library]") and "aten._softmax" in r.output
    r = verify(softmax, str(HERE / "cheat_getattr_op.py"), "--variant", "small", "--allow-library", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["sandbox"].startswith("sandboxed:")
