"""Convolutions the library outpaces by its rate alone (generate/outpaced.py): a dense fp32 convolution that is
compute-bound is planned as the library's (TF32 under PyTorch's defaults) before anything is built or timed, in
measured mode on NVIDIA under the ieee policy; memory-bound, grouped, 16-bit, tf32-policy, AMD and predicted runs
keep their generated candidates. The plan is checked on the CPU with the run marked as measured on an H100 (the
stages after it need the GPU)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from kerntailor.generate import GenerateSettings, pipeline
from kerntailor.generate.outpaced import OUTPACED_RATIO, library_runs_tf32, outpaced_convs
from kerntailor.ir.nodes import Conv
from kerntailor.plan.coverage import LIBRARY as LIBRARY_GROUP
from kerntailor.targets import resolve_target

H100 = resolve_target("h100")

PROBLEM = """
import torch
import torch.nn as nn
import torch.nn.functional as F

N, CIN, COUT, H, W = {n}, {cin}, {cout}, {h}, {h}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 3, padding=1, groups={groups}, bias=False)

    def forward(self, x):
        {body}


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
"""


def _problem(tmp_path, name="p", n=8, cin=64, cout=128, h=32, groups=1, body="return self.conv(x)"):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(PROBLEM.format(n=n, cin=cin, cout=cout, h=h, groups=groups, body=body)))
    return path


def _measured_run(path, target="h100", precision="ieee", dtype=None):
    """pipeline's capture stage with the run marked as measured on `target` (its GPU taken as this machine's)."""
    run = pipeline._start(path, GenerateSettings(target=target, precision=precision, dtype=dtype, use_store=False,
                                                 out_dir=path.parent / "out"), lambda *a: None)
    run.local = run.target
    pipeline._capture(run)
    return run


def _conv(run) -> Conv:
    return next(n for n in run.gen.graph.nodes if isinstance(n, Conv))


def test_a_compute_bound_dense_fp32_conv_is_outpaced_by_the_tf32_library(tmp_path):
    run = _measured_run(_problem(tmp_path))
    conv = _conv(run)
    (o,) = run.outpaced.values()
    assert o.node == conv.name and o.ratio >= OUTPACED_RATIO
    flops = conv.flops()   # 2 x N x COUT x H x W x CIN x 9: compute-bound at both rates
    assert o.generated_s == pytest.approx(flops / H100.peak("fp32", matrix=False))
    assert o.library_s == pytest.approx(flops / H100.peak("tf32"))
    assert "TF32" in o.reason() and "--precision tf32" in o.reason()


def test_a_bare_outpaced_conv_is_a_library_group_with_the_floors_as_its_reason(tmp_path):
    run = _measured_run(_problem(tmp_path))
    (group,) = run.plan.groups
    assert group.family == LIBRARY_GROUP
    pipeline._plan_around_refusals(run)
    (why,) = run.library_groups.values()
    assert why.startswith("conv: the library's TF32 convolution") and "us against" in why
    assert pipeline._outpaced_entry(run)["outpaced"][0]["label"].startswith("predicted")


def test_an_outpaced_conv_read_by_another_group_is_planned_as_a_library_call_its_epilogue_generated(tmp_path):
    """relu(conv) read by a max pool: the conv group does not take the library knob (codegen/conv_library.py), so
    the convolution is the library's and the ReLU fuses into what follows, as generate's second pass planned it."""
    run = _measured_run(_problem(tmp_path, body="return F.max_pool2d(torch.relu(self.conv(x)), 2)"))
    families = [g.family for g in run.plan.groups]
    assert families[0] == LIBRARY_GROUP and LIBRARY_GROUP not in families[1:] and len(families) >= 2
    assert set(run.library_anchors) == {_conv(run).name}


def test_an_outpaced_conv_that_takes_the_library_knob_stays_a_conv_group(tmp_path):
    """conv + bias-free ReLU leaving the module: the knob's one kernel (library product + tail) is what the search
    times (group_search.py's _library_product_only), so the group stays the conv family's."""
    run = _measured_run(_problem(tmp_path, body="return torch.relu(self.conv(x))"))
    (group,) = run.plan.groups
    assert group.family == "conv" and group.anchor in run.outpaced and not run.library_anchors


@pytest.mark.parametrize("case", ["memory-bound", "grouped", "tf32 policy", "bf16", "amd", "predicted"])
def test_generated_candidates_are_kept_where_the_rate_does_not_decide(tmp_path, case):
    kw = {"memory-bound": dict(cin=3, cout=4), "grouped": dict(groups=4)}.get(case, {})
    path = _problem(tmp_path, **kw)
    if case == "predicted":
        run = pipeline._start(path, GenerateSettings(target="h100", use_store=False, out_dir=tmp_path / "o"),
                              lambda *a: None)
        pipeline._capture(run)   # no GPU here: predicted
    else:
        run = _measured_run(path, target="mi300x" if case == "amd" else "h100",
                            precision="tf32" if case == "tf32 policy" else "ieee",
                            dtype="bf16" if case == "bf16" else None)
    assert run.outpaced == {} and run.library_anchors == {}
    assert all(g.family != LIBRARY_GROUP for g in run.plan.groups)


def test_no_conv_is_outpaced_where_the_user_turned_tf32_off(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    assert not library_runs_tf32(H100)
    run = _measured_run(_problem(tmp_path))
    assert outpaced_convs(run.gen.graph, H100, "ieee", measured=True) == {}
    assert run.outpaced == {}


def test_an_outpaced_group_with_the_knob_times_only_its_library_product(tmp_path, monkeypatch):
    """group_search: the library product's forms are the only modules timed (the GPU worker stood in for), the
    winner is a LIBRARY schedule and no generated candidate is built or timed."""
    from kerntailor.generate import evaluate, group_search

    timed = []

    def measure(self, evals):
        for e in evals:
            timed.append(e.config.key())
            e.seconds, e.label = 1e-3 * len(timed), "measured"

    monkeypatch.setattr(evaluate.Evaluator, "measure", measure)
    monkeypatch.setattr(evaluate.Evaluator, "__call__", lambda self, configs: pytest.fail("a generated candidate"))
    run = _measured_run(_problem(tmp_path, body="return torch.relu(self.conv(x))"))
    schedules = pipeline._plan_around_refusals(run)
    (group,) = run.plan.groups
    found = group_search.search_group(run, schedules, group)
    assert timed and all(key.startswith("conv-library") for key in timed)
    assert found.ranked[0].LIBRARY and found.seconds == (1e-3,) and found.trials == ()
