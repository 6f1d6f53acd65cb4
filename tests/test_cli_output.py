"""What the commands print and where (cli_output.py): --json is one JSON document on stdout with the human lines on
stderr; off a terminal, progress is one flushed line per stage (and per problem), the report is Markdown text with
no dict reprs, and generate's last line names report.md (issue #22 item 3)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kerntailor.cli import app
from kerntailor.cli_output import StageLines

DATA = Path(__file__).parent / "data" / "codegen_fused"


def test_stage_lines_are_one_at_the_start_and_one_at_the_end_of_each_stage(capsys):
    lines = StageLines()
    lines("capture", 0, 1, None)
    for done in range(1, 49):
        lines("search k0", done, 48, 1e-5)
    lines("verify", 0, 1, None)
    lines.close()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 6, err
    assert err[0] == "capture ..." and err[2] == "search k0 ..." and err[4] == "verify ..."
    assert err[3].startswith("search k0 48/48 done (") and "best 10.0 us" in err[3]


@pytest.mark.interpreter
def test_generate_bench_and_recheck_json_and_plain_output(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("kerntailor.generate.pipeline.detect_local_target", lambda: None)
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    problem = suite / "tiny_softmax.py"
    shutil.copy(DATA / "tiny_softmax.py", problem)
    shutil.copy(DATA / "tiny_conv2d.py", suite)
    runner = CliRunner()
    common = ["--target", "mi300x", "--budget", "20", "--candidates", "2"]

    # generate --json: stdout is one JSON document; progress and the human lines are on stderr
    r = runner.invoke(app, ["generate", str(problem), *common, "--out", str(tmp_path / "g"), "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema_version"] >= 1 and {"torch", "triton", "python", "kerntailor"} <= set(doc["toolchain"])
    assert doc["status"] == "generated" and doc["report"]["verdict"]["passed"]
    assert doc["report_md"] == str(tmp_path / "g" / "report.md")
    # report.html where matplotlib is installed (the `report` extra), and then named last
    html = tmp_path / "g" / "report.html"
    assert html.exists() == (importlib.util.find_spec("matplotlib") is not None)
    assert doc["report_html"] == (str(html) if html.exists() else None)
    err = r.stderr.splitlines()
    assert "capture ..." in err and "verify ..." in err and any(e.startswith("search k0 ...") for e in err)
    assert err[-1].startswith("wrote ") and err[-1].endswith("report.html" if html.exists() else "report.md")

    # without --json, off a terminal: the Markdown text, configs as name=value, the last line names report.md
    r = runner.invoke(app, ["generate", str(problem), *common, "--out", str(tmp_path / "g")])
    assert r.exit_code == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0].startswith("# tiny_softmax on mi300x") and "{'" not in r.stdout and "num_warps=" in r.stdout
    assert out[-1] == (f"wrote {tmp_path / 'g' / 'kernel.py'}, {tmp_path / 'g' / 'report.json'}, "
                       f"{tmp_path / 'g' / 'report.md'} and {html}" if html.exists() else
                       f"wrote {tmp_path / 'g' / 'kernel.py'}, {tmp_path / 'g' / 'report.json'} and "
                       f"{tmp_path / 'g' / 'report.md'}")
    assert r.stdout.count("worst ‖out−ref‖/‖ref‖") <= 1 and "worst relative error" not in r.stdout

    # bench --json (served from the store: the same search as above): the rows on stdout, one line per problem
    # on stderr; the library row is labelled as the library
    r = runner.invoke(app, ["bench", str(tmp_path / "suite"), *common, "--out", str(tmp_path / "b"), "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema_version"] >= 1 and doc["toolchain"]["triton"]
    rows = {row["problem"]: row for row in doc["rows"]}
    assert rows["tiny_softmax"]["correct"] is True and rows["tiny_conv2d"]["correct"] is None
    assert "[1/2] tiny_conv2d" in r.stderr and "[2/2] tiny_softmax" in r.stderr
    assert json.loads((tmp_path / "b" / "bench.json").read_text())["schema_version"] == doc["schema_version"]
    assert "| tiny_conv2d | level1 | library | library |" in (tmp_path / "b" / "bench.md").read_text()

    # recheck --json: nothing is stale under this toolchain
    r = runner.invoke(app, ["recheck", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["rows"] == [] and doc["regressions"] == 0 and doc["schema_version"] >= 1


def test_markdown_is_rendered_on_a_terminal_and_text_elsewhere(capsys, monkeypatch):
    import kerntailor.cli_output as output

    text = "# relu on mi300x\n\nMode: **predicted**\n\n| kernel | config |\n|---|---|\n| k0 | XBLOCK=1024 |\n"
    monkeypatch.setattr(output, "is_terminal", lambda stream: False)
    output.print_markdown(text)
    assert capsys.readouterr().out == text
    monkeypatch.setattr(output, "is_terminal", lambda stream: True)
    output.print_markdown(text)
    shown = capsys.readouterr().out
    assert "relu on mi300x" in shown and "XBLOCK=1024" in shown
    assert "**" not in shown and "|---|" not in shown and "# relu" not in shown


def test_a_warning_is_one_labelled_line(capsys, monkeypatch):
    """A warning from the user's file or from torch on its behalf (Swin's torch.meshgrid on `inspect`) is one line
    that says it is a warning and where it came from, never Python's two lines echoing the source."""
    import warnings

    from kerntailor.cli_output import one_line_warnings

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)   # restored after the test
    one_line_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn_explicit("torch.meshgrid: pass the indexing argument. (Triggered internally at "
                               "/w/TensorShape.cpp:4215.)\nsecond line", UserWarning, "/x/torch/functional.py", 504)
    err = capsys.readouterr().err
    assert err == "warning (UserWarning at torch/functional.py:504): torch.meshgrid: pass the indexing argument.\n"
