"""Groups codegen used to refuse on the planner's first plan, found by benchmarks/codegen_refusals.py on KernelBench
(benchmarks/data/cpu_2026-12-05/): each now one kernel, judged by the referee under the interpreter and
cross-compiled for sm_90 and gfx942. tests/data/refusals holds one problem file per cause."""

from __future__ import annotations

import pytest

from helpers import DATA, make_module, prepared, verify

REFUSALS = DATA / "refusals"
KEEPDIM = REFUSALS / "keepdim_reductions.py"
LOOPED = {"reduction": {"persistent": False, "RBLOCK": 16}}   # a pass over the row per stage


def _reductions_of_reductions(path) -> list[str]:
    _, _, gen, plan = prepared(path)
    graph = gen.graph
    return [n for g in plan.groups for n in g.nodes if graph.node(n).family == "reduction"
            and graph.node(n).operands[0].base in g.nodes and graph.node(graph.node(n).operands[0].base).family
            == "reduction"]


@pytest.mark.parametrize("knobs", [None, LOOPED], ids=["persistent", "looped"])
def test_reductions_over_a_kept_axis_of_one_element_stay_in_one_kernel(knobs):
    """A max, min, sum and argmax of a row's sum over its kept size-1 axis: each row of them is one complete row
    value of the reduction before it, so the planner's group is written as it is (refused before: 'reduces a
    reduction', and generate cut it before each)."""
    assert len(_reductions_of_reductions(KEEPDIM)) >= 3   # the cause is in the plan
    module = make_module(KEEPDIM, knobs)
    assert len(module.kernels) == len(prepared(KEEPDIM)[3].groups)


@pytest.mark.interpreter
@pytest.mark.parametrize("knobs", [None, LOOPED], ids=["persistent", "looped"])
def test_reductions_over_a_kept_axis_pass_the_referee(knobs, tmp_path):
    verify(KEEPDIM, make_module(KEEPDIM, knobs), tmp_path)


@pytest.mark.compile
def test_reductions_over_a_kept_axis_cross_compile(tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    sources = [kernel_source(m.source, k) for m in (make_module(KEEPDIM), make_module(KEEPDIM, LOOPED))
               for k in m.kernels]
    targets = [get_target("mi300x"), get_target("h200")]
    assert [t.arch for t in targets] == ["gfx942", "sm_90"]
    results = build_many(sources, targets, cache_dir=tmp_path / "build-cache")
    assert len(results) == len(sources) * len(targets)
    for r in results:
        assert r.ok, f"{r.target}: {r.error}"

