"""Where the search's seconds go (generate/effort.py): layout groups first in plan order, then the generated groups
hottest first by their roofline floor (twins together); each a share of what is left of the budget; once the
budget is spent after the first unit, the rest keep their default schedule, and the report says which."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from kerntailor.generate import GenerateSettings, effort, generate
from kerntailor.generate.effort import SearchEffort


@dataclass(frozen=True)
class _Group:
    name: str
    inputs: tuple = ()
    outputs: tuple = ()


class _Plan:
    def __init__(self, names, reads=None):
        reads = reads or {}
        self.groups = tuple(_Group(n, tuple(reads.get(n, ())), (f"{n}_out",)) for n in names)


class _Settings:
    def __init__(self, budget_s):
        self.budget_s = budget_s


class _Run:
    def __init__(self, names, budget_s, reads=None):
        self.plan = _Plan(names, reads)
        self.settings = _Settings(budget_s)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(effort.time, "monotonic", c)
    return c


def _effort(monkeypatch, floors: dict[str, float], budget_s=10.0, keys=None, layouts=(), fixed=(), reads=None):
    monkeypatch.setattr(effort, "group_floor_s", lambda run, g: floors.get(g.name, 0.0))
    names = list(floors) + [n for n in fixed if n not in floors]
    run = _Run(names, budget_s, reads)
    searchable = {n: n in layouts for n in names if n not in fixed}
    return SearchEffort.of(run, keys or {}, searchable)


def test_order_hottest_first_twins_summed_each_after_the_layouts_it_reads(monkeypatch, clock):
    # k3 and k4 are twins: their unit's floor (2 + 2) passes k1's 3; k5 and k7 time a layout: k1 reads k5's output,
    # so k5 comes just before k1; nothing generated reads k7's, so it comes after every generated group
    floors = {"k0": 1.0, "k1": 3.0, "k2": 0.5, "k3": 2.0, "k4": 2.0, "k5": 9.0, "k6": 0.0, "k7": 5.0}
    e = _effort(monkeypatch, floors, keys={"k3": ("t",), "k4": ("t",)}, layouts=("k5", "k7"), fixed=("k6",),
                reads={"k1": ("k5_out",), "k2": ("k5_out",)})
    assert [g.name for g in e.order] == ["k3", "k4", "k5", "k1", "k0", "k2", "k7", "k6"]
    assert e.floor_s["k3"] == e.floor_s["k4"] == 4.0


def test_budget_shared_by_floor_and_the_rest_kept_at_default(monkeypatch, clock):
    floors = {"a": 6.0, "b": 3.0, "c": 1.0}
    e = _effort(monkeypatch, floors, budget_s=10.0)
    a, b, c = e.order
    assert a.name == "a" and e.allowance(a) == pytest.approx(6.0)   # 6 of 10 of the floor, all of the budget left
    clock.now += 50.0          # the first unit's search (and a measured module's compile): not counted
    e.visit(a)
    assert e.allowance(b) == pytest.approx(10.0 * 3.0 / 4.0)        # b's share among b and c
    clock.now += 9.0
    e.visit(b)
    assert e.allowance(c) == pytest.approx(1.0)                     # the one second left, all c's
    clock.now += 1.5
    assert e.allowance(c) is None                                   # spent: c keeps its default
    why = e.why_unsearched(c)
    assert "10 s" in why and "10.0%" in why


def test_the_first_unit_is_searched_whatever_the_budget(monkeypatch, clock):
    e = _effort(monkeypatch, {"a": 1.0, "b": 1.0}, budget_s=0.0)
    first, second = e.order
    assert e.allowance(first) == 0.0        # searched: its seeds only (the strategy's share is nothing)
    e.visit(first)
    clock.now += 0.001
    assert e.allowance(second) is None


def test_no_floor_known_shares_evenly(monkeypatch, clock):
    e = _effort(monkeypatch, {"a": 0.0, "b": 0.0}, budget_s=8.0)
    assert e.allowance(e.order[0]) == pytest.approx(4.0)


THREE_GROUPS = textwrap.dedent('''
    import torch
    import torch.nn as nn

    B, N, M = 64, 1024, 96


    class Model(nn.Module):
        """Three independent groups: a row sum over the large input, an exp and a row max over small ones."""

        def __init__(self):
            super().__init__()

        def forward(self, x, y, z):
            return x.sum(dim=-1), torch.exp(y) * 2.0, z.amax(dim=-1)


    def get_inputs():
        return [torch.randn(B, N), torch.randn(B, M), torch.randn(B, M)]


    def get_init_inputs():
        return []
''')


@pytest.mark.interpreter
@pytest.mark.compile
def test_generate_keeps_cold_groups_at_default_and_says_so(tmp_path, monkeypatch):
    """A budget that runs out after the hottest group: the others are not searched, the report says so, and the
    module they are in still passes the referee (predicted mode, mi300x, under the interpreter)."""
    import kerntailor.generate.pipeline as pipeline

    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(pipeline, "detect_local_target", lambda *a, **k: None)
    problem = tmp_path / "three_groups.py"
    problem.write_text(THREE_GROUPS)
    result = generate(problem, GenerateSettings(target="mi300x", out_dir=tmp_path / "out", max_candidates=3,
                                                budget_s=0.0, store_path=tmp_path / "store.sqlite"))
    assert result.status == "generated", result.message
    assert result.verdict is not None and result.verdict.passed
    report = json.loads(Path(result.report_path).read_text())
    kernels = report["kernels"]
    assert len(kernels) == 3
    searched = [k for k in kernels if k["searched"]]
    kept = [k for k in kernels if not k["searched"]]
    assert len(searched) == 1 and searched[0]["trials"] >= 1
    # the searched one is the sum over the large input: the most of the floor
    assert any(n.startswith("sum") for n in searched[0]["nodes"]), searched[0]["nodes"]
    assert all(k["trials"] == 0 and k["seconds"] is None and "not searched" in k["label"] for k in kept)
    md = (Path(result.report_path).parent / "report.md").read_text()
    assert "2 of 3 kernels kept their default schedule" in md


@pytest.mark.unit
def test_a_library_layout_left_untimed_is_reported_not_searched(monkeypatch):
    """A library group whose layout the budget left untimed says so (report.json's `searched`, its label), like a
    generated group kept at its default; one whose layout was timed, or that has none, does not."""
    from types import SimpleNamespace

    from kerntailor.generate import pipeline
    from kerntailor.generate.group_search import GroupSearch

    monkeypatch.setattr(pipeline, "library_call", lambda node: SimpleNamespace(dotted="torch.ops.aten.convolution"))
    run = SimpleNamespace(library_groups={"conv0": "conv: outpaced"},
                          gen=SimpleNamespace(graph=SimpleNamespace(node=lambda name: None)))
    group = SimpleNamespace(name="conv0", family="library", nodes=("conv0",))
    why = "not searched: the budget was spent on hotter groups"
    kept = pipeline._group_result(run, GroupSearch(group, (None,), (), None, (), {}, None, kept_default=why), None)
    assert kept.kept_default == why and why in kept.label and kept.config == {}
    plain = pipeline._group_result(run, GroupSearch(group, (None,), (), None, (), {}, None), None)
    assert plain.kept_default == "" and "not timed" not in plain.label
