"""Plans mended around codegen's refusals (generate/pipeline.py `_plan_around_refusals`): a fused group that codegen
refuses at one member (a reduction of the group's own reduction, a gather of a gather) is cut before that member
(plan_fusion's `cuts`), never sent whole to the library path.

tests/data/mended holds one problem file per shape of the cause: reduce_of_reduced.py (KernelBench's
level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp: reductions over a kept size-1 axis; since codegen reads those
as row values, its plan is cut only here, by hand), gather_two_axes.py
(level3/30_SwinTransformerV2's torch.roll over two axes as torch decomposes it, then windows of it),
scan_then_last.py (a scan's epilogue reading the scan's output broadcast from its row's first element; a scan has no
library call, so the whole file took the library path)."""

from __future__ import annotations

import pytest

from helpers import DATA, judge, prepared
from kerntailor.codegen import FAMILIES, GroupUnsupported, refused_anchors
from kerntailor.generate.pipeline import GenerateSettings, first_module
from kerntailor.plan import plan_fusion

MENDED = DATA / "mended"
REDUCE_OF_REDUCED = MENDED / "reduce_of_reduced.py"
ROLL = MENDED / "gather_two_axes.py"
SCAN_LAST = MENDED / "scan_then_last.py"


def _group_names(plan) -> list[list[str]]:
    return [list(g.nodes) for g in plan.groups]


def test_a_cut_node_starts_a_group_apart_from_what_it_depends_on():
    _, _, gen, plan = prepared(REDUCE_OF_REDUCED)
    graph = gen.graph
    reductions = [n.name for n in graph.nodes if n.family == "reduction"]
    second = reductions[1]   # the max over the kept axis: the planner puts it with the reductions after it
    together = plan.group_of(second)
    later = [r for r in reductions[2:] if r in together.nodes]
    assert later, _group_names(plan)
    cut = plan_fusion(graph, FAMILIES, library=refused_anchors(graph), cuts=[later[0]])
    group = cut.group_of(later[0])
    assert group.nodes[0] == later[0] and second not in group.nodes, _group_names(cut)
    assert cut.group_of(second) is not group
    # nothing else moves: the groups before the cut are the same
    assert plan.group_of(reductions[0]).nodes == cut.group_of(reductions[0]).nodes


def test_every_cut_node_heads_a_group_of_its_own():
    """Both gathers cut: each heads a group of its own, none merged back by the nodes after it."""
    _, _, gen, plan = prepared(ROLL)
    gathers = [n.name for n in gen.graph.nodes if n.name.startswith("gather")]
    cut = plan_fusion(gen.graph, FAMILIES, library=refused_anchors(gen.graph), cuts=gathers)
    homes = [cut.group_of(g) for g in gathers]
    assert len({h.name for h in homes}) == len(gathers)
    assert all(h.nodes[0] == g for h, g in zip(homes, gathers)), _group_names(cut)


@pytest.mark.parametrize("path", [ROLL, SCAN_LAST], ids=["gather_two_axes", "scan_then_last"])
def test_the_planned_group_is_refused_without_mending(path):
    """The cause, kept in view: codegen refuses the planner's first plan, naming the member to cut before.
    (reduce_of_reduced's reductions over a kept size-1 axis are no longer refused: tests/test_codegen_refusals.py.)"""
    from helpers import make_module

    _, _, gen, _ = prepared(path)
    with pytest.raises(GroupUnsupported) as refused:
        make_module(path)
    assert refused.value.node in {n.name for n in gen.graph.nodes}


@pytest.mark.interpreter
@pytest.mark.parametrize("path", [REDUCE_OF_REDUCED, ROLL, SCAN_LAST],
                         ids=["reduce_of_reduced", "gather_two_axes", "scan_then_last"])
def test_the_mended_module_is_generated_whole_and_passes_the_referee(path, tmp_path):
    first = first_module(path, GenerateSettings(target="h200", out_dir=tmp_path / "out"))
    assert first.library_groups == {}
    assert "torch.ops.aten" not in first.module.source
    verdict = judge(path, first.module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{first.module.source}"


@pytest.mark.compile
@pytest.mark.parametrize("path", [REDUCE_OF_REDUCED, ROLL, SCAN_LAST],
                         ids=["reduce_of_reduced", "gather_two_axes", "scan_then_last"])
def test_the_mended_kernels_cross_compile(path, tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    module = first_module(path, GenerateSettings(target="h200", out_dir=tmp_path / "out")).module
    sources = [kernel_source(module.source, kernel) for kernel in module.kernels]
    targets = [get_target("mi300x"), get_target("h200")]
    results = build_many(sources, targets, cache_dir=tmp_path / "build-cache")
    assert len(results) == len(sources) * len(targets)
    for r in results:
        assert r.ok, f"{path.stem} on {r.target}: {r.error}"


def test_a_refused_anchor_without_a_library_call_keeps_its_kernel_and_loses_its_epilogue():
    """A refusal that names no member, of a group whose anchor has no library call (a scan): the members after the
    anchor become kernels of their own (the anchor stays generated); refused again so, it is raised."""
    from types import SimpleNamespace

    from kerntailor.generate.pipeline import _mend

    _, _, gen, plan = prepared(SCAN_LAST)
    group = next(g for g in plan.groups if g.family == "scan")
    assert len(group.nodes) > 1, _group_names(plan)
    run = SimpleNamespace(plan=plan, gen=gen)
    refused, no_tails, cuts = {}, set(), set()
    why = GroupUnsupported(group.name, "a reason that names no member")
    _mend(run, why, refused, no_tails, cuts)
    assert cuts == set(group.nodes) - {group.anchor} and refused == {} and no_tails == set()
    with pytest.raises(GroupUnsupported):
        _mend(run, why, refused, no_tails, cuts)


@pytest.mark.unit
def test_a_product_over_fewer_elements_than_the_smallest_tile_has_a_space():
    """K = 3 (level-3 49_Mamba2's chunk products): the space once had no config at all (a split_k constraint held
    BLOCK_K to K even without a split), so nothing was searched; one masked BLOCK_K step covers it, a split does not."""
    from kerntailor.search.families import make_space
    from kerntailor.targets import get_target

    for target in ("mi300x", "h200"):
        space = make_space("matmul", get_target(target), M=512, N=256, K=3)
        configs = space.enumerate()
        assert configs and {dict(c.knobs)["BLOCK_K"] for c in configs} == {16}
        assert {dict(c.knobs)["split_k"] for c in configs} == {1}


@pytest.mark.interpreter
def test_a_group_whose_space_is_empty_keeps_its_default_schedule(tmp_path, monkeypatch):
    """A space with no valid config (search/space.py EmptySpace, raised by the strategy) ended generate in a
    traceback; now nothing is searched and the default schedule ships, built and predicted as a trial of its own.
    The K = 3 product also searches its own space (no EmptySpace) and passes."""
    from kerntailor.generate import group_search
    from kerntailor.generate.pipeline import generate
    from kerntailor.search.space import EmptySpace

    searched = generate(MENDED / "matmul_k3.py", GenerateSettings(target="mi300x", out_dir=tmp_path / "searched",
                                                                   max_candidates=3, budget_s=5, use_store=False))
    assert searched.status == "generated" and searched.verdict.passed, searched.message
    assert searched.groups[0].trials > 1

    class Empty:
        def run(self, space, *args, **kwargs):
            raise EmptySpace("no valid config")

    monkeypatch.setattr(group_search, "get_strategy", lambda *args, **kwargs: Empty())
    result = generate(MENDED / "matmul_k3.py", GenerateSettings(target="mi300x", out_dir=tmp_path / "out",
                                                                 max_candidates=2, budget_s=5, use_store=False))
    assert result.status == "generated" and result.verdict.passed, result.message
    (group,) = result.groups   # the default, built and predicted as a trial of its own: the report has its time
    assert group.seconds is not None and group.seconds > 0 and group.facts is not None and group.trials == 1
