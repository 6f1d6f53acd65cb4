"""`kerntailor targets` and `kerntailor inspect` through the CLI: output, JSON, and user errors as exit
code 2 with one line on stderr and never a traceback (CliRunner, and the real console script once).

In this process inspect's capture comes from the tests' capture cache (helpers.captured_variant: the same
capture_problem, run once per problem, dtype and variant until the capture code changes); the console script's
run captures for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import captured_variant
from kerntailor.cli import app

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = ROOT / "problems" / "level1" / "softmax_long_rows.py"
TARGET_NAMES = ["mi300x", "mi325x", "mi355x", "mi250x", "h100", "h200", "a100"]

UNSUPPORTED = """
import torch
import torch.nn as nn

batch_size = 64
dim = 256


class Model(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1).values


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


@pytest.fixture(autouse=True)
def cached_captures(monkeypatch):
    import kerntailor.inspect

    monkeypatch.setattr(kerntailor.inspect, "capture_problem", captured_variant)


def run(*args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def assert_user_error(result, *needles: str) -> str:
    """Exit code 2, nothing on stdout, exactly one line on stderr: 'kerntailor: error: ...'."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kerntailor: error: "), lines[0]
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# --- targets -----------------------------------------------------------------------------------------------

def test_targets_lists_all_seven():
    result = run("targets")
    assert result.exit_code == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    for name in TARGET_NAMES:
        assert any(row.split("│")[1].strip().rstrip(" *") == name for row in rows), name
    assert "5.30" in result.stdout and "1,307.4" in result.stdout  # MI300X bandwidth and bf16 peak


def test_targets_json_parses():
    result = run("targets", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema_version"] >= 1 and document["toolchain"]["triton"]
    data = document["targets"]
    assert [t["name"] for t in data] == TARGET_NAMES
    mi300x = data[0]
    assert mi300x["memory_bandwidth"] == 5.3e12 and mi300x["peak_flops"]["bf16"] == 1307.4e12
    assert mi300x["sources"]["memory_bandwidth"]
    assert sum(t["local"] for t in data) <= 1


# --- inspect -------------------------------------------------------------------------------------------------

def test_inspect_softmax_on_mi300x():
    result = run("inspect", SOFTMAX, "--target", "mi300x")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "roofline floor" in out and "memory-bound" in out and "2431.1" in out
    assert "fusion plan: 1 kernel(s)" in out
    assert "max over axes [1]" in out and "exp(in0)" in out
    assert result.stderr == ""


def test_inspect_json():
    result = run("inspect", SOFTMAX, "--target", "mi300x", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["problem"] == "softmax_long_rows" and data["target"]["name"] == "mi300x"
    assert data["schema_version"] >= 1 and data["toolchain"]["torch"]
    assert data["floor"]["microseconds"] == pytest.approx(2431.1, abs=0.05)
    assert data["floor"]["bound"] == "memory"
    assert data["cost"]["min_bytes"] == data["cost"]["plan_bytes"] == 2 * 4096 * 393216 * 4
    assert [n["family"] for n in data["nodes"]] == ["reduction", "pointwise", "pointwise", "reduction",
                                                    "pointwise"]
    assert len(data["plan"]) == 1


def test_inspect_bf16_and_another_target():
    result = run("inspect", SOFTMAX, "--target", "h100", "--dtype", "bf16", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["dtype"] == "bf16" and data["inputs"][0]["type"] == "bf16[4096, 393216]"
    assert data["cost"]["min_bytes"] == 2 * 4096 * 393216 * 2
    assert data["floor"]["microseconds"] == pytest.approx(2 * 4096 * 393216 * 2 / 3.35e12 * 1e6)
    text = run("inspect", SOFTMAX, "-t", "gfx942", "--dtype", "bf16")
    assert text.exit_code == 0 and "dtype bf16" in text.stdout and "1215.6 us, memory-bound" in text.stdout


def test_inspect_variant():
    result = run("inspect", SOFTMAX, "--variant", "odd", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["variant"] == "odd" and data["inputs"][0]["type"] == "fp32[3, 9973]"


# --- user errors: exit 2, one line, no traceback -----------------------------------------------------------

def test_unknown_target():
    assert_user_error(run("inspect", SOFTMAX, "--target", "rtx9090"), "rtx9090", "mi300x")


def test_missing_file(tmp_path):
    assert_user_error(run("inspect", tmp_path / "nowhere.py"), "nowhere")


def test_syntax_error_file(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import torch\n\nclass Model(:\n    pass\n")
    assert_user_error(run("inspect", path), "broken", "line 3")


def test_unsupported_op_file(tmp_path):
    path = tmp_path / "sorts.py"
    path.write_text(UNSUPPORTED)
    assert_user_error(run("inspect", path, "--target", "h200"), "sorts", "sort")


def test_unknown_dtype_and_variant():
    assert_user_error(run("inspect", SOFTMAX, "--dtype", "fp64"), "fp64")
    assert_user_error(run("inspect", SOFTMAX, "--variant", "huge"), "huge", "small")


def test_usage_errors_exit_2_without_traceback():
    result = run("inspect")  # no problem file: click's usage error
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert run("no-such-command").exit_code == 2


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("kerntailor")
    if script.exists():
        return [str(script)]
    found = shutil.which("kerntailor")
    return [found] if found else [sys.executable, "-m", "kerntailor"]


@pytest.mark.integration
def test_real_console_script_leaks_no_traceback(tmp_path):
    path = tmp_path / "sorts.py"
    path.write_text(UNSUPPORTED)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(_console_script() + ["inspect", str(path), "--target", "mi300x"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kerntailor: error: ") and "aten.sort" in lines[0], proc.stderr
