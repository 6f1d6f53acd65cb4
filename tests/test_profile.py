"""`kerntailor profile` (predicted mode): the numbers hold together, groups are attributed to the user's modules,
the written problem files load, capture and inspect, and mistakes are one line with a non-zero exit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

import kerntailor
from kerntailor.cli import app
from kerntailor.profiling import profile_problem
from kerntailor.profiling.render import profile_dict

TINY = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Model(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.layers = nn.ModuleList(Block(d) for _ in range(layers))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return torch.softmax(self.head(x), dim=-1)


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32, 2]
'''

LABEL = "predicted (h200, baseline model v1)"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tiny_model.py"
    path.write_text(TINY)
    return path


@pytest.fixture(scope="module")
def report(tiny, tmp_path_factory):
    return profile_problem(tiny, "h200", top=2, out_dir=tmp_path_factory.mktemp("hot"))


@pytest.mark.capture
def test_numbers_hold_together(report):
    assert report.mode == "predicted" and report.label == LABEL
    assert report.groups, "no groups"
    shares = sum(g.share for g in report.groups) + report.unattributed_us / report.eager_us
    assert math.isclose(shares, 1.0, abs_tol=1e-9)
    assert math.isclose(sum(g.eager_us for g in report.groups) + report.unattributed_us, report.eager_us,
                        rel_tol=1e-9)
    assert [g.eager_us for g in report.groups] == sorted((g.eager_us for g in report.groups), reverse=True)
    for g in report.groups:
        assert 0 < g.floor_us <= g.eager_us, g
        assert g.gain_share >= 0 and g.amdahl_speedup >= 1, g
        assert math.isclose(g.gain_share, (g.eager_us - g.floor_us) / report.eager_us, rel_tol=1e-9)
        assert math.isclose(g.roofline_share, g.floor_us / g.eager_us, rel_tol=1e-9)


@pytest.mark.capture
def test_groups_are_attributed_to_the_users_modules(report):
    modules = {g.module for g in report.groups}
    assert "unknown" not in modules, modules
    assert any(m.startswith("layers.1.mlp") for m in modules), modules
    assert any(m.startswith("layers.0.norm") for m in modules), modules


@pytest.mark.capture
def test_json_is_plain_and_labelled(report):
    data = json.loads(json.dumps(profile_dict(report), allow_nan=False))
    assert data["label"] == LABEL and data["mode"] == "predicted" and "predicted" in data["note"]
    assert len(data["groups"]) == len(report.groups)


@pytest.mark.capture
def test_written_problem_files_load_capture_and_inspect(report):
    from kerntailor.capture import capture_problem
    from kerntailor.problem import load_problem

    written = [g for g in report.groups if g.problem_file]
    assert len(written) == 2 and written == list(report.groups[:2])
    for g in written:
        problem = load_problem(g.problem_file)
        graph = capture_problem(problem).graph
        assert sum(n.flops() for n in graph.nodes) == g.flops, g.name   # the same work as the group
    result = CliRunner().invoke(app, ["inspect", written[0].problem_file, "--target", "h200"])
    assert result.exit_code == 0, result.output
    assert "fusion plan" in result.stdout


@pytest.mark.capture
def test_python_api_profiles_any_module_and_leaves_it_alone():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(4, 16)
    report = kerntailor.profile(model, [x], target="h200", dtype="bf16")
    assert report.label == LABEL and report.dtype == "bf16"
    assert {m for g in report.groups for m in g.modules} <= {"0", "1", "2"}
    assert math.isclose(sum(g.share for g in report.groups), 1.0, abs_tol=1e-9)
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) and after[k].device.type == "cpu" for k in before)


@pytest.mark.capture
def test_cli_json(tiny):
    result = CliRunner().invoke(app, ["profile", str(tiny), "--target", "h200", "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["label"] == LABEL and data["groups"][0]["share"] > 0


@pytest.mark.capture
def test_cli_out_writes_profile_json_and_html_and_names_them_last(tiny, tmp_path):
    """--out: profile.json and, with matplotlib (the report extra), profile.html beside the problem files; the
    last line and --json name them; the page's numbers are profile.json's."""
    import importlib.util

    from helpers import check_page_numbers

    out = tmp_path / "p"
    result = CliRunner().invoke(app, ["profile", str(tiny), "--target", "h200", "--top", "1", "--json",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    data, doc = json.loads(result.stdout), json.loads((out / "profile.json").read_text())
    page = out / "profile.html"
    assert page.exists() == (importlib.util.find_spec("matplotlib") is not None)
    assert data["profile_json"] == str(out / "profile.json") and data["groups"] == doc["groups"]
    assert data["profile_html"] == (str(page) if page.exists() else None)
    written = f"wrote {out / 'profile.json'}" + (f" and {page}" if page.exists() else "")
    assert result.stderr.splitlines()[-1] == written
    assert doc["groups"][0]["problem_file"] and doc["label"] == LABEL and doc["schema_version"] >= 1
    if page.exists():
        check_page_numbers(page.read_text(), doc, {"eager_us", "groups/0/share", "groups/0/gain_share"})
        assert f"<span class='mode predicted'>{LABEL}</span>" in page.read_text()


def test_without_matplotlib_profile_writes_the_json_and_says_why_no_page(tmp_path, monkeypatch):
    from helpers import without_matplotlib
    from kerntailor import cli

    said = without_matplotlib(monkeypatch)
    assert cli._write_profile({"model": "m", "groups": []}, tmp_path) == [tmp_path / "profile.json"]
    assert not (tmp_path / "profile.html").exists()
    assert said == ["profile.html not written: matplotlib is not installed (pip install 'kerntailor[report]')"]


@pytest.mark.parametrize("args, needle", [
    (["{bad}"], "syntax error"),
    (["{tiny}", "--target", "no-such-gpu"], "unknown target"),
    (["{missing}"], "cannot read"),
    (["{tiny}", "--top", "0"], "--top"),
])
def test_cli_mistakes_are_one_line(tmp_path, tiny, args, needle):
    bad = tmp_path / "bad.py"
    bad.write_text("class Model(\n")
    paths = {"bad": bad, "tiny": tiny, "missing": tmp_path / "missing.py"}
    result = CliRunner().invoke(app, ["profile", *[a.format(**paths) for a in args]])
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kerntailor: error: ") and needle in lines[0], lines


@pytest.mark.integration
@pytest.mark.interpreter
@pytest.mark.slow
def test_generate_takes_a_written_file_as_it_is(report, tmp_path, monkeypatch):
    """About two minutes on two CPU cores: the search, the interpreter and the referee's processes."""
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    hot = report.groups[0].problem_file
    result = CliRunner().invoke(app, ["generate", hot, "--target", "h200", "--budget", "10", "--candidates", "2",
                                      "--out", str(tmp_path / "gen"), "--no-store", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "generated" and data["report"]["verdict"]["passed"], data["message"]


@pytest.mark.capture
def test_a_written_file_computes_what_the_group_computes_inside_the_model(tiny, report):
    """The model's own exported graph run on real tensors gives every intermediate value; each written file,
    called on the values its arguments name, returns the values its results name."""
    import re

    from kerntailor.capture.provenance import capture_traced
    from kerntailor.problem import load_problem
    from kerntailor.problem.load import exec_module

    problem = load_problem(tiny)
    traced = capture_traced(problem.name, problem.make_model(device="meta"), problem.make_inputs(device="meta"))
    model, (x,) = problem.make_model(device="cpu"), problem.make_inputs(device="cpu")
    state = model.state_dict()
    specs = {s.arg.name: s for s in traced.program.graph_signature.input_specs}
    args = [x if specs[p.name].target is None else state[specs[p.name].target]
            for p in traced.program.graph.nodes if p.op == "placeholder"]
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            values[n.name] = super().run_node(n)
            return values[n.name]

    with torch.no_grad():
        Recorder(traced.program.graph_module).run(*args)
    for g in report.groups[:2]:
        source = Path(g.problem_file).read_text()
        module = exec_module(source, Path(g.problem_file), {}, {})
        names = list(__import__("inspect").signature(module.Model.forward).parameters)[1:]
        returned = re.search(r"^\s+return \(?([\w, ]+?)\)?$", source, re.M).group(1)
        outs = [r.strip() for r in returned.split(",") if r.strip()]
        with torch.no_grad():
            got = module.Model()(*[values[n] for n in names])
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(outs)
        for name, value in zip(outs, got):
            torch.testing.assert_close(value, values[name], rtol=0, atol=0)


HEADS = '''
import torch
import torch.nn as nn

batch_size = 3
seq_len = 24
dim = 32


class Model(nn.Module):
    """Linear layers on (batch, seq, dim) export views that merge batch and seq; heads split dim."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        h = self.qkv(self.norm(x)).view(b, s, 2, d // 2).transpose(1, 2)
        h = torch.softmax(h, dim=-1).transpose(1, 2).reshape(b, s, d)
        return x + self.out(h)


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim]
'''


@pytest.mark.capture
def test_written_files_run_at_every_variant_as_the_referee_calls_them(tmp_path_factory):
    """The referee loads a candidate once, at the file's constants as written (the library path's is the file
    itself: ModelNew = Model), and calls it at every variant the loader derives: a written file's forward must
    take its sizes from its inputs, not from its constants (a view of [72, dim1] failed at the odd variant)."""
    from kerntailor.problem import load_problem

    path = tmp_path_factory.mktemp("heads") / "heads_model.py"
    path.write_text(HEADS)
    report = profile_problem(path, "h200", top=20, out_dir=tmp_path_factory.mktemp("hot"))
    files = [g.problem_file for g in report.groups if g.problem_file]
    failed, pinned, viewed = [], [], 0
    for file in files:
        problem = load_problem(file)
        as_written = problem.make_model("default", "cpu")
        for variant in problem.variants:
            inputs = problem.make_inputs(variant, "cpu")
            with torch.no_grad():
                want = problem.make_model(variant, "cpu")(*inputs)
                try:
                    got = as_written(*inputs)
                except RuntimeError as e:
                    failed.append(f"{Path(file).name} at {variant.describe()}: {e}")
                    continue
            torch.testing.assert_close(got, want, rtol=0, atol=0)
        pinned += [Path(file).name] if len(problem.variants) == 1 else []
        viewed += "view.default" in Path(file).read_text()
    assert not failed, failed
    # every size in these files can follow the inputs: none is pinned at its real sizes (VARIANTS = {})
    assert not pinned and len(files) >= 4 and viewed >= 3, (pinned, len(files), viewed)
    for file in files:
        result = CliRunner().invoke(app, ["inspect", file, "--target", "h200"])
        assert result.exit_code == 0, (file, result.output)


# --- measured mode (profiling/measured.py): on this CPU the host's clock per op, labelled so -------------------------

@pytest.fixture(scope="module")
def measured_report(tiny):
    return profile_problem(tiny, "h200", top=2, measured=True, steps=2)


@pytest.mark.capture
def test_measured_mode_times_each_eager_op_and_apportions_them_like_the_predicted(report, measured_report):
    m = measured_report
    assert m.mode == "measured" and "measured (cpu, torch.profiler host time, no GPU" in m.label
    assert "floors predicted (h200 roofline)" in m.label
    # the same groups, the same floors: only the eager seconds differ, and they hold together
    assert {g.name: g.floor_us for g in m.groups} == {g.name: g.floor_us for g in report.groups}
    assert math.isclose(sum(g.eager_us for g in m.groups) + m.unattributed_us, m.eager_us, rel_tol=1e-9)
    assert all(g.eager_us > 0 for g in m.groups), [(g.name, g.eager_us) for g in m.groups]
    assert m.eager_kernels == report.eager_kernels   # the ops recorded are the predicted trace's
    assert "measured" in profile_dict(m)["note"]


@pytest.mark.capture
def test_each_recorded_op_gets_its_own_profiler_range():
    from kerntailor.profiling.measured import measure_eager

    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
    timed = measure_eager(model, [torch.randn(4, 16)], steps=2)
    assert [op.op.split(".")[1] for op in timed.ops] == ["addmm", "relu"]
    assert timed.clock == "cpu" and timed.steps == 2 and all(s > 0 for s in timed.seconds)
    assert math.isclose(timed.total_s, sum(timed.seconds))
    with pytest.raises(kerntailor.KerntailorError, match="at least 1"):
        measure_eager(model, [torch.randn(4, 16)], steps=0)
