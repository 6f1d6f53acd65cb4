"""A measured first pass that is already far behind eager ends after its search (group_search.FirstPassLost): where
generate has a second pass around the library's convolution (a conv group whose library product the search does not
time, and something generated around it), the search's GPU worker also times the reference, and a best module at
ABANDON_RATIO x eager or slower ends the pass before the other groups' searches and the referee; the second pass
runs at once. Checked on the CPU: which groups may end a pass, the rule, the worker's eager record, and the second
pass it leads to (the stages that need a GPU are stood in for)."""

from __future__ import annotations

import json
import textwrap
from types import SimpleNamespace

import pytest

from kerntailor.generate import GenerateSettings, evaluate, pipeline
from kerntailor.generate.group_search import ABANDON_RATIO, FirstPassLost, check_first_pass

PROBLEM = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1, bias=False)

    def forward(self, x):
        {body}


def get_inputs():
    return [torch.randn(2, 8, 32, 32)]


def get_init_inputs():
    return []
"""

POOLED = "return F.max_pool2d(torch.relu(self.conv(x)), 2)"   # a conv group another group reads: no library knob


def _problem(tmp_path, body):
    path = tmp_path / "p.py"
    path.write_text(textwrap.dedent(PROBLEM.format(body=body)))
    return path


def _run(path, measured=True, **settings):
    run = pipeline._start(path, GenerateSettings(target="h100", use_store=False, out_dir=path.parent / "out",
                                                 **settings), lambda *a: None)
    if measured:
        run.local = run.target
    pipeline._capture(run)
    pipeline._plan_around_refusals(run)
    return run


@pytest.mark.parametrize(("body", "measured", "expected"), [
    (POOLED, True, {"conv"}),
    (POOLED, False, set()),                                       # predicted: no GPU time to save
    ("return self.conv(x)", True, set()),                         # a plain conv: its first pass is the only one
    ("return torch.relu(self.conv(x)).mean(dim=(2, 3))", True, set()),   # a reducing tail: the knob times the library
], ids=["conv_read_by_a_pool", "predicted", "plain_conv", "reducing_tail"])
def test_which_groups_may_end_a_pass(tmp_path, body, measured, expected):
    run = _run(_problem(tmp_path, body), measured=measured)
    families = {g.name: g.family for g in run.plan.groups}
    assert {families[name] for name in pipeline._abandonable(run)} == expected


def test_the_library_family_already_chosen_ends_no_pass(tmp_path):
    run = _run(_problem(tmp_path, POOLED), library_families=("conv",))
    assert pipeline._abandonable(run) == frozenset()
    assert list(run.library_groups.values()) == ["conv: the library's (timed as the alternative to the generated one)"]


def test_the_rule_is_the_best_module_against_eager_by_the_margin():
    found = SimpleNamespace(group=SimpleNamespace(name="k0"), seconds=(ABANDON_RATIO * 100e-6, 500e-6))
    with pytest.raises(FirstPassLost, match=r"k0: .*130.0 us against eager's 100.0 us \(1.30x"):
        check_first_pass(found, 100e-6)
    check_first_pass(found, 101e-6)                                 # just inside the margin: the pass goes on
    check_first_pass(found, None)                                   # eager not timed: nothing to compare
    check_first_pass(replace_seconds(found, ()), 1e-6)              # nothing timed


def replace_seconds(found, seconds):
    return SimpleNamespace(group=found.group, seconds=seconds)


def test_the_evaluator_reads_the_workers_eager_record(monkeypatch, tmp_path):
    """The worker's lines: set-up, then eager (asked for once), then the candidates'."""
    asked = []

    def fake_run(request, out, timeout_s):
        asked.append(request["time_eager"])
        lines = [{"setup_s": 1.5}, {"eager_median_s": 2e-4}] + [
            {"path": p, "ok": True, "median_s": 3e-4, "error": ""} for p in request["candidates"]]
        out.write_text("".join(json.dumps(r) + "\n" for r in lines))
        return ""

    monkeypatch.setattr(evaluate.WORKER, "run", fake_run)
    ev = evaluate.Evaluator(target=None, work=None, materialize=None, measured=True, time_eager=True)
    e1 = evaluate.Evaluation(config=None, source="x = 1")
    ev.measure([e1])
    assert ev.eager_s == 2e-4 and e1.seconds == 3e-4 and e1.label == "measured"
    ev.measure([evaluate.Evaluation(config=None, source="x = 2")])
    assert asked == [True, False]                                   # timed once a search


def test_an_abandoned_first_pass_goes_straight_to_the_library_conv_pass(tmp_path, monkeypatch):
    """_generate_template: the abandoned pass's plan leads to the second pass (conv as the library's), whose report
    carries the first's seconds."""
    path = _problem(tmp_path, POOLED)
    calls = []

    def fake_once(problem_path, settings, progress=None, plan_out=None):
        calls.append(settings)
        if len(calls) == 1:
            run = _run(path)
            plan_out.append((run.plan, run.gen))
            return pipeline.GenerateResult("p", "h100", "measured", "library", "abandoned after its search: k",
                                           tmp_path / "k.py", tmp_path / "r.json",
                                           report={"wall_s": 12.5, "stage_s": {"search": 9.0}, "abandoned": "k"},
                                           lost_on_time=True)
        return pipeline.GenerateResult("p", "h100", "measured", "generated", "generated 1 kernel(s)",
                                       tmp_path / "k.py", tmp_path / "r.json")

    monkeypatch.setattr(pipeline, "_generate_once", fake_once)
    result = pipeline._generate_template(path, GenerateSettings(target="h100", out_dir=tmp_path / "o"))
    assert len(calls) == 2 and calls[1].library_families == ("conv",) and not calls[1].store_lookup
    assert dict(calls[1].first_pass) == {"wall_s": 12.5, "search_s": 9.0}
    assert result.status == "generated" and result.message.startswith("with generated conv: abandoned")


@pytest.mark.gpu
def test_the_gpu_worker_times_eager_once_a_set_up(tmp_path):
    """On a GPU: the worker's batch asked for eager writes {"eager_median_s"} before its candidates' records, from one
    timing per set-up; the candidate (here the reference's own text as ModelNew) is timed as usual."""
    from kerntailor.generate import gpu_bench

    path = _problem(tmp_path, POOLED)
    cand = tmp_path / "cand.py"
    cand.write_text(path.read_text().replace("class Model(", "class ModelNew("))
    job = {"problem": str(path), "dtype": None, "candidates": [str(cand)], "time_eager": True, "budget_s": 0.1}
    bench = gpu_bench.setup(job)
    outs = [tmp_path / "out1.jsonl", tmp_path / "out2.jsonl"]
    for out in outs:
        assert gpu_bench.run_batch(bench, job, str(out))
    first, second = ([json.loads(line) for line in out.read_text().splitlines()] for out in outs)
    assert first[0]["eager_median_s"] > 0 and second[0] == first[0]   # timed once, reported to each batch
    assert first[1]["ok"] and first[1]["median_s"] > 0
