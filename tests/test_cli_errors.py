"""Every flag and path mistake of issue #22 (item 3): one line `kerntailor: error: ...` on stderr, nothing on
stdout, exit status 2, and no work started (the commands' stage functions are replaced by ones that fail the
test if called). CliRunner runs the real command group in this process (its one error path:
cli.KerntailorGroup.main); test_real_console_script_* runs the console script once."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kerntailor.cli import app

ROOT = Path(__file__).resolve().parent.parent
RELU = ROOT / "problems" / "level1" / "relu.py"
LEVEL1 = ROOT / "problems" / "level1"
CAND = ROOT / "tests" / "candidates"
RELU_SMALL = CAND / "problems" / "relu_small.py"
OK_RELU = CAND / "ok_relu.py"


@pytest.fixture(autouse=True)
def no_work(monkeypatch, tmp_path):
    """Any stage reached is a test failure: the mistakes must be caught before any work starts."""
    def started(*a, **k):
        raise AssertionError("work started before the mistake was caught")

    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("kerntailor.generate.generate", started)
    monkeypatch.setattr("kerntailor.generate.bench.generate", started)
    monkeypatch.setattr("kerntailor.verify.verify_candidate", started)


def run(*args) -> object:
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_one_line(result, *needles: str) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == "", result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kerntailor: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def _file(tmp_path: Path) -> Path:
    f = tmp_path / "a_file"
    f.write_text("not a directory\n")
    return f


# (command line, words the one line must hold); {tmp} and {file} are filled in per test
MISTAKES = [
    (["generate", RELU, "--strategy", "exhaustve"], ["--strategy", "exhaustve", "evolutionary"]),
    (["bench", LEVEL1, "--strategy", "beam"], ["--strategy", "beam", "exhaustive"]),
    (["generate", RELU, "--budget", "-5"], ["--budget", "> 0", "-5"]),
    (["generate", RELU, "--budget", "0"], ["--budget", "> 0"]),
    (["generate", RELU, "--budget", "nan"], ["--budget", "> 0"]),
    (["bench", LEVEL1, "--budget", "-1"], ["--budget", "> 0"]),
    (["generate", RELU, "--candidates", "0"], ["--candidates", "1"]),
    (["bench", LEVEL1, "--candidates", "0"], ["--candidates", "1"]),
    (["bench", LEVEL1, "--jobs", "0"], ["--jobs", "1"]),
    (["generate", RELU, "--llm-turns", "0"], ["--llm-turns", "1"]),
    (["verify", RELU_SMALL, OK_RELU, "--timeout", "-1"], ["--timeout", "> 0", "-1"]),
    (["verify", RELU_SMALL, OK_RELU, "--timeout", "0"], ["--timeout", "> 0"]),
    (["verify", RELU_SMALL, OK_RELU, "--draws", "1000000000"], ["--draws", "100"]),
    (["verify", RELU_SMALL, OK_RELU, "--draws", "2"], ["--draws", "3"]),
    (["verify", RELU_SMALL, OK_RELU, "--device", "tpu"], ["--device", "tpu", "cuda"]),
    (["verify", RELU_SMALL, OK_RELU, "--precision", "fp4"], ["--precision", "fp4", "fp8-row"]),
    (["generate", RELU, "--precision", "fp4"], ["--precision", "fp4", "tf32x3"]),
    (["generate", RELU, "--proposer", "gpt"], ["--proposer", "gpt", "template"]),
    (["bench", LEVEL1, "--part", "conv"], ["--part", "conv", "memory-bound"]),
    (["bench", LEVEL1, "--target", "h9000"], ["--target", "h9000", "mi300x"]),
    (["generate", RELU, "--target", "h9000"], ["--target", "h9000"]),
    (["inspect", RELU, "--target", "h9000"], ["--target", "h9000"]),
    (["costmodel", "--target", "h9000"], ["--target", "h9000"]),
    (["bench", LEVEL1, "--dtype", "fp7"], ["--dtype", "fp7", "bf16"]),
    (["generate", RELU, "--dtype", "fp7"], ["--dtype", "fp7"]),
    (["verify", RELU_SMALL, OK_RELU, "--dtype", "fp7"], ["--dtype", "fp7"]),
    (["generate", RELU, "--out", "{file}"], ["--out", "is a file"]),
    (["bench", LEVEL1, "--out", "{file}"], ["--out", "is a file"]),
    (["generate", RELU, "--out", "{file}/sub"], ["--out", "lies under", "which is a file"]),
    (["generate", RELU, "--out", "/proc/kerntailor-no-such-dir/out"], ["--out", "cannot write into"]),
    (["generate", RELU, "--seed-kernel", "{tmp}/missing_kernel.py"], ["--seed-kernel", "no such file"]),
    (["generate", RELU, "--seed-kernel", "{tmp}"], ["--seed-kernel", "not a file"]),
    (["bench", LEVEL1, "--only", "relux"], ["--only", "relux", "matches no problem"]),
    (["bench", "{file}"], ["not a directory"]),
    (["no-such-command"], ["no-such-command"]),
    (["generate"], ["Missing argument"]),
    (["costmodel"], ["--target"]),
    (["generate", RELU, "--no-such-flag"], ["--no-such-flag"]),
]


@pytest.mark.parametrize("args, needles", MISTAKES, ids=[" ".join(str(a) for a in m[0][:3]) + " " +
                                                         " ".join(str(a) for a in m[0][3:]) for m in MISTAKES])
def test_each_mistake_is_one_line_and_exit_2(args, needles, tmp_path):
    fill = {"{tmp}": str(tmp_path), "{file}": str(_file(tmp_path))}
    filled = []
    for a in args:
        a = str(a)
        for k, v in fill.items():
            a = a.replace(k, v)
        filled.append(a)
    assert_one_line(run(*filled, *(["--out", tmp_path / "out"] if "--out" not in filled and filled[0] in
                                   ("generate", "bench") and len(filled) > 1 else [])), *needles)


def test_read_only_out_is_refused(tmp_path, monkeypatch):
    """A read-only mount answers EROFS to any new file, root included: the check creates one to find out."""
    import kerntailor.cli_options as options

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(options.tempfile, "TemporaryFile", read_only)
    assert_one_line(run("generate", RELU, "--out", tmp_path / "ro"), "--out", "Read-only file system")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a directory without write permission")
def test_directory_without_write_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert_one_line(run("generate", RELU, "--out", locked), "--out", "cannot write into")
        assert_one_line(run("generate", RELU, "--out", locked / "sub"), "--out", "cannot write into")
    finally:
        locked.chmod(0o755)


def test_out_holding_another_problems_kernel_needs_force(tmp_path):
    import json

    out = tmp_path / "out"
    out.mkdir()
    (out / "kernel.py").write_text("# the kernel of softmax\n")
    (out / "report.json").write_text(json.dumps({"problem": "softmax", "path": "/somewhere/softmax.py"}))
    line = assert_one_line(run("generate", RELU, "--out", out), "--force", "softmax")
    assert str(out) in line
    (out / "report.json").unlink()   # a kernel.py of unknown origin
    assert_one_line(run("generate", RELU, "--out", out), "--force", "without a report.json")


def test_out_of_the_same_problem_and_force_pass_the_check(tmp_path):
    """The check lets the same problem's --out through, and any --out with --force: the work then starts (here:
    the test's stand-in for generate, which says so)."""
    import json

    out = tmp_path / "out"
    out.mkdir()
    (out / "kernel.py").write_text("# relu\n")
    (out / "report.json").write_text(json.dumps({"problem": "relu", "path": str(RELU.resolve())}))
    for args in (["generate", RELU, "--out", out], ["generate", RELU, "--out", out, "--force"]):
        result = run(*args)
        assert isinstance(result.exception, AssertionError) and "work started" in str(result.exception)
    (out / "report.json").write_text(json.dumps({"problem": "softmax", "path": "/x/softmax.py"}))
    result = run("generate", RELU, "--out", out, "--force")
    assert isinstance(result.exception, AssertionError)


def test_bench_out_holding_another_suite_needs_force(tmp_path):
    import json

    out = tmp_path / "bench"
    out.mkdir()
    (out / "bench.json").write_text(json.dumps({"suite": "/elsewhere/suite"}))
    assert_one_line(run("bench", LEVEL1, "--out", out), "--force", "/elsewhere/suite")


def test_help_lists_every_choice():
    wide = {"COLUMNS": "400"}   # rich wraps the help's columns to the terminal: one line a choice list
    text = "".join(CliRunner().invoke(app, [c, "--help"], env=wide).stdout for c in ("generate", "bench", "verify"))
    flat = "".join(text.split())
    for choice in ("exhaustive|random|evolutionary", "fp32|bf16|fp16", "ieee|tf32x3|tf32|fp8-row|fp8-tensor",
                   "template|llm|all", "all|memory-bound|gemm", "auto|cuda|cpu",
                   "mi300x|mi325x|mi355x|mi250x|h100|h200|a100|local"):
        assert choice in flat, choice


def test_choices_match_the_registries():
    from kerntailor.cli_options import Dtype, Part, Precision, Proposer, Strategy, target_names
    from kerntailor.generate.bench import PARTS
    from kerntailor.generate.sources import PROPOSERS
    from kerntailor.precision import PRECISIONS
    from kerntailor.problem.spec import DTYPES
    from kerntailor.search.registry import STRATEGIES
    from kerntailor.targets import all_targets

    assert [s.value for s in Strategy] == list(STRATEGIES)
    assert [d.value for d in Dtype] == list(DTYPES)
    assert [p.value for p in Precision] == list(PRECISIONS)
    assert [p.value for p in Proposer] == list(PROPOSERS)
    assert [p.value for p in Part] == list(PARTS)
    assert target_names() == tuple(t.name for t in all_targets()) + ("local",)


def test_target_aliases_are_accepted_and_canonicalized():
    from kerntailor.cli_options import parse_target

    assert parse_target("gfx942") == "mi300x" and parse_target("SM_90") == "h200"
    assert parse_target("AMD Instinct MI300X") == "mi300x" and parse_target("local") == "local"


def test_version():
    import kerntailor

    result = run("--version")
    assert result.exit_code == 0
    line = result.stdout.strip()
    assert line.startswith(f"kerntailor {kerntailor.__version__} (") and "torch " in line and "triton " in line


def test_a_problem_with_a_trillion_element_variant_is_refused_from_its_sizes(tmp_path, monkeypatch):
    """Sizes are checked on meta tensors: a 1e12-element variant is refused with the bytes it would need, before
    anything is allocated (the referee's memory plan; here its verify_candidate is the real one)."""
    monkeypatch.undo()
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    problem = tmp_path / "huge.py"
    problem.write_text("import torch\nimport torch.nn as nn\n\nN = 4096\nVARIANTS = {'huge': {'N': 10**12}}\n\n\n"
                       "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n\n"
                       "def get_inputs():\n    return [torch.randn(N)]\n\n\ndef get_init_inputs():\n    return []\n")
    line = assert_one_line(run("verify", problem, OK_RELU, "--device", "cpu", "--variant", "huge"), "huge")
    assert "GB" in line and "too big" in line


@pytest.mark.integration
def test_real_console_script_prints_one_line(tmp_path):
    # this checkout's source first, whatever the caller's PYTHONPATH is relative to
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "KERNTAILOR_HOME": str(tmp_path / "home"), "PYTHONPATH": path}
    proc = subprocess.run([sys.executable, "-m", "kerntailor", "generate", str(RELU), "--budget", "-5"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "", (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kerntailor: error: ") and "--budget" in lines[0], proc.stderr
