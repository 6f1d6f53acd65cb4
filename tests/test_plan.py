"""The first fusion plan: the reduction, pointwise and GEMM-epilogue families fuse into one kernel moving
the minimum bytes; on every problem the plan is a partition of the graph into an acyclic set of groups
that writes every graph output."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from helpers import ROOT, captured_variant, loaded
from kerntailor.codegen import FAMILIES, refused_anchors
from kerntailor.ir.nodes import Graph, Matmul, Reduction
from kerntailor.plan import Plan, plan_fusion
from kerntailor.plan.fusion import ANCHORS

PROBLEMS = ROOT / "problems"
# the kernel suite: problems/models/ holds whole models (profile/optimize; tests/test_hf_models.py)
FILES = sorted(p for p in PROBLEMS.glob("level*/**/*.py") if not p.name.startswith("_"))
IDS = [str(p.relative_to(PROBLEMS)) for p in FILES]
BY_NAME = {p.stem: p for p in FILES}


@functools.cache
def captured(name: str):
    """The default variant's capture of problem `name`, once per session, kept in the tests' capture cache between
    sessions (helpers.captured_variant)."""
    return captured_variant(loaded(BY_NAME[name]))


def planned(name: str) -> tuple[Graph, Plan, int]:
    return _planned(name, tuple(FAMILIES))   # once per set of codegen's families (conftest's library_conv)


@functools.cache
def _planned(name: str, families: tuple[str, ...]) -> tuple[Graph, Plan, int]:
    cap = captured(name)
    return cap.graph, plan_fusion(cap.graph, families, library=refused_anchors(cap.graph)), cap.cost.min_bytes


def check_partition(graph: Graph, plan: Plan) -> None:
    """Every node in exactly one group, groups in topological order inside, acyclic between them,
    every graph output written, inputs and outputs consistent with the graph."""
    names = [n.name for n in graph.nodes]
    members = [name for g in plan.groups for name in g.nodes]
    assert sorted(members) == sorted(names), "each node in exactly one group"
    owner = {name: g.name for g in plan.groups for name in g.nodes}
    assert len({g.name for g in plan.groups}) == len(plan.groups)
    producers = {n.name: n for n in graph.nodes}
    graph_inputs = {i.name for i in graph.inputs}
    consumers = graph.consumers()
    graph_outputs = {v.base for v in graph.outputs}

    deps: dict[str, set[str]] = {g.name: set() for g in plan.groups}
    for g in plan.groups:
        inside = set(g.nodes)
        seen: set[str] = set()
        reads: set[str] = set()
        for name in g.nodes:
            node = producers[name]
            for view in node.operands:
                if view.base in inside:
                    assert view.base in seen, f"{g.name}: {name} reads {view.base} before the group computes it"
                else:
                    reads.add(view.base)
                    if view.base not in graph_inputs:
                        deps[g.name].add(owner[view.base])
            seen.add(name)
        assert set(g.inputs) == reads, (g.name, g.inputs, reads)
        must_write = {n for n in g.nodes if n in graph_outputs or any(c not in inside for c in consumers[n])}
        assert set(g.outputs) == must_write, (g.name, g.outputs, must_write)
        assert g.bytes_moved > 0 or not g.outputs
        families = {producers[n].family for n in g.nodes}
        if g.family == "library":   # an anchor without a generator, alone (a recurrent call: its results)
            assert len(families) == 1 and families <= set(ANCHORS), (g.name, families)
            continue
        assert g.family in families, (g.name, g.family, families)
        anchors = families - {"pointwise", "reduction"}
        assert len(anchors) <= 1 and (not anchors or g.family in anchors), (g.name, g.family, families)
        assert not anchors & (set(ANCHORS) - set(FAMILIES)), (g.name, "an anchor without a generator fused")

    # acyclic: Kahn's algorithm orders every group
    remaining = {k: set(v) for k, v in deps.items()}
    order = []
    while remaining:
        ready = [k for k, v in remaining.items() if not v]
        assert ready, f"cycle between groups {sorted(remaining)}"
        for k in ready:
            order.append(k)
            del remaining[k]
        for v in remaining.values():
            v.difference_update(ready)
    assert len(order) == len(plan.groups)

    written = {o for g in plan.groups for o in g.outputs}
    for view in graph.outputs:
        assert view.base in written or view.base in graph_inputs, f"graph output {view.base} is never written"
    assert plan.bytes_moved == sum(g.bytes_moved for g in plan.groups)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_plan_partitions_every_problem(path):
    graph, plan, _ = planned(path.stem)
    assert plan.groups
    check_partition(graph, plan)
    for g in plan.groups:
        assert plan.group_of(g.nodes[0]) is g


# --- families that must fuse into one kernel ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax_long_rows", "softmax_short_rows", "layernorm", "rmsnorm",
                                  "log_softmax", "mse_loss"])
def test_reduction_work_is_one_group_at_min_bytes(name):
    graph, plan, min_bytes = planned(name)
    reductions = [n for n in graph.nodes if isinstance(n, Reduction)]
    assert reductions
    assert len(plan.groups) == 1, [(g.family, g.nodes) for g in plan.groups]
    group = plan.groups[0]
    assert group.family == "reduction"
    assert set(group.nodes) == {n.name for n in graph.nodes}
    assert group.reduce_axes == reductions[0].axes
    assert group.space == reductions[0].operands[0].shape
    assert group.outputs == tuple(v.base for v in graph.outputs)
    assert plan.bytes_moved == min_bytes


def test_softmax_plan_reads_x_once_and_writes_once():
    graph, plan, min_bytes = planned("softmax_long_rows")
    (group,) = plan.groups
    assert group.inputs == ("x",) and group.outputs == (graph.nodes[-1].name,)
    assert group.bytes_moved == 2 * 4096 * 393216 * 4 == min_bytes


def test_cross_entropy_row_reductions_share_one_group():
    graph, plan, min_bytes = planned("cross_entropy")
    assert len(plan.groups) <= 3, [(g.family, g.nodes) for g in plan.groups]
    logits = next(i.name for i in graph.inputs if i.type.dtype == "fp32")
    row = [n for n in graph.nodes if isinstance(n, Reduction) and n.operands[0].shape == (4096, 128256)]
    assert {r.op for r in row} == {"max", "sum"}
    groups = {plan.group_of(r.name).name for r in row}
    assert len(groups) == 1
    main = plan.group_of(row[0].name)
    assert logits in main.inputs and sum(logits in g.inputs for g in plan.groups) == 1  # logits read once
    # only per-row vectors and scalars travel between the kernels
    assert plan.bytes_moved - min_bytes <= 8 * 4096 * 8
    assert plan.bytes_moved >= min_bytes


@pytest.mark.parametrize("name", ["gelu_tanh", "pointwise_chain", "gelu_erf", "mish", "bias_gelu_tanh"])
def test_pointwise_chain_is_one_group_at_min_bytes(name):
    graph, plan, min_bytes = planned(name)
    assert {n.family for n in graph.nodes} == {"pointwise"} and len(graph.nodes) > 1
    assert len(plan.groups) == 1, [(g.family, g.nodes) for g in plan.groups]
    (group,) = plan.groups
    assert group.family == "pointwise" and len(group.nodes) == len(graph.nodes)
    assert group.space == graph.output_types[0].shape
    assert plan.bytes_moved == min_bytes


@pytest.mark.parametrize("name", ["gemm_bias_gelu", "gemm_bias_relu", "gemm_clamp", "gemm_scale_residual"])
def test_gemm_epilogue_is_one_matmul_group_at_min_bytes(name):
    graph, plan, min_bytes = planned(name)
    assert len(plan.groups) == 1, [(g.family, g.nodes) for g in plan.groups]
    (group,) = plan.groups
    assert group.family == "matmul"
    mm = graph.node(group.nodes[0])
    assert isinstance(mm, Matmul), "the GEMM leads its group; the pointwise nodes are its epilogue"
    assert len(group.nodes) == len(graph.nodes) > 1
    assert group.space == mm.out.shape
    assert mm.name not in group.outputs, "the accumulator never goes to memory"
    assert plan.bytes_moved == min_bytes


def test_unfused_plan_would_move_more():
    """The plan's bytes beat one kernel per node wherever it fused something."""
    for name in ("softmax_long_rows", "layernorm", "gelu_tanh", "gemm_bias_gelu"):
        graph, plan, _ = planned(name)
        assert plan.bytes_moved < captured(name).cost.unfused_bytes, name


def test_groupnorm_affine_joins_its_statistics():
    """GroupNorm's affine runs on (N, C, H, W), its statistics on (N, G, C/G·H·W): a reshape of the same
    elements in the same order, so one group reads x and writes y once."""
    graph, plan, min_bytes = planned("groupnorm")
    assert len(plan.groups) == 1, [(g.family, g.nodes) for g in plan.groups]
    (group,) = plan.groups
    assert group.family == "reduction" and len(group.nodes) == len(graph.nodes)
    assert group.outputs == tuple(v.base for v in graph.outputs)
    assert plan.bytes_moved == min_bytes


def test_rotary_half_is_recomputed_not_written():
    """rotate_half's -x[..., d/2:] feeds only the cat, which reads it through a narrowing view."""
    graph, plan, min_bytes = planned("rotary_embedding")
    assert len(plan.groups) == 1, [(g.family, g.nodes) for g in plan.groups]
    assert plan.bytes_moved == min_bytes


def test_refinement_and_narrowing_views():
    from kerntailor.ir.types import View
    from kerntailor.plan.fusion import narrowing_shift, refinement, split_strides

    assert refinement((16, 8, 524288), (16, 64, 256, 256)) == (16, 8, 8, 256, 256)
    assert refinement((6, 4), (4, 6)) is None            # the row-major orders do not nest
    assert refinement((2, 1, 3), (6,)) == (2, 3)
    assert split_strides((16, 64, 256, 256), (0, 1, 0, 0), (16, 8, 8, 256, 256)) == (0, 8, 1, 0, 0)
    half = View("p", (2, 3, 8), (12, 4, 1))                # a (2, 3, 4) buffer read as a cat's first half
    assert narrowing_shift(half, (2, 3, 4)) == (-1, 0)
    assert narrowing_shift(View("p", (2, 3, 8), (12, 4, 1), -4), (2, 3, 4)) == (2, -4)   # the second half
    assert narrowing_shift(View("p", (2, 4, 3), (12, 1, 4)), (2, 3, 4)) is None          # a transpose


# --- anchors the library runs (mixed plans) -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["conv2d_bias_relu", "conv2d_batchnorm_relu", "conv2d_relu_bias_add"])
def test_a_conv_without_a_generator_is_a_library_group_and_its_tail_is_planned_as_usual(name, library_conv):
    """The convolution alone is the library group; its bias, activation and the rest read its output in
    ordinary generated groups (no anchor group takes an epilogue it cannot generate)."""
    graph, plan, _ = planned(name)
    conv = next(n for n in graph.nodes if n.family == "conv")
    (library,) = [g for g in plan.groups if g.family == "library"]
    assert library.nodes == (conv.name,) and library.outputs == (conv.name,)
    rest = [g for g in plan.groups if g is not library]
    assert rest and all(g.family in ("pointwise", "reduction") for g in rest)
    assert any(conv.name in g.inputs for g in rest)


@pytest.mark.parametrize("name", ["conv2d_bias_relu", "conv2d_relu_bias_add"])
def test_a_generated_conv_takes_its_pointwise_tail_as_its_epilogue(name):
    """With codegen's conv family (codegen/conv.py) the convolution starts a conv group and the bias, activation
    and added bias after it join it: one group, nothing written between them."""
    graph, plan, _ = planned(name)
    check_partition(graph, plan)
    (group,) = plan.groups
    conv = next(n for n in graph.nodes if n.family == "conv")
    assert group.family == "conv" and group.anchor == conv.name and len(group.nodes) > 1
    assert group.outputs == (group.nodes[-1],)


def test_an_anchor_codegen_refuses_is_planned_alone_when_named():
    """`library` names anchor nodes codegen refused: the matmul of gemm_bias_relu becomes a library group and
    its bias + relu a pointwise group reading the product; unnamed, the plan is the usual one-group GEMM."""
    graph, plan, _ = planned("gemm_bias_relu")
    assert [g.family for g in plan.groups] == ["matmul"]
    mm = next(n for n in graph.nodes if isinstance(n, Matmul))
    mixed = plan_fusion(graph, FAMILIES, library={mm.name})
    check_partition(graph, mixed)
    assert [g.family for g in mixed.groups] == ["library", "pointwise"]
    assert mixed.groups[0].nodes == (mm.name,) and mm.name in mixed.groups[1].inputs


# --- a pool's pointwise prologue ----------------------------------------------------------------------------

PROLOGUE = Path(__file__).parent / "data" / "pool_prologue"


@pytest.mark.parametrize("name", ["maxpool1d_pad_ceil", "maxpool2d_pad", "maxpool3d_pad", "avgpool1d_ceil_exclude_pad",
                                  "avgpool2d_pad", "avgpool3d_ceil_pad"])
def test_a_pointwise_group_only_a_pool_reads_is_its_prologue(name):
    """The pointwise nodes at the pool's input shape join the pool's group as its prologue, padding or not (1-d
    pools read them as (N, C, 1, L)): the group reads x and writes the pool's output, nothing at the input's size."""
    from helpers import prepared

    _, _, gen, plan = prepared(PROLOGUE / f"{name}.py")
    graph = gen.graph
    check_partition(graph, plan)
    (group,) = [g for g in plan.groups if g.family == "pool"]
    pool = graph.node(group.anchor)
    assert pool.family == "pool" and group.nodes[-1] == pool.name
    x = next(i for i in graph.inputs if i.kind == "input")
    full = [n.name for n in graph.nodes if n.family == "pointwise" and n.out.numel == x.type.numel]
    assert full and group.prologue == tuple(full) and group.nodes[:len(full)] == tuple(full)
    assert group.outputs == (pool.name,) and x.name in group.inputs
    small = sum(i.type.nbytes for i in graph.inputs if i.name in group.inputs and i is not x)
    small += sum(graph.node(b).out.nbytes for b in group.inputs if b not in {i.name for i in graph.inputs})
    assert group.bytes_moved == x.type.nbytes + pool.out.nbytes + small


@pytest.mark.parametrize("name, why", [
    ("overlapping_window", "a 3x3 window at stride 1 reads each element 9 times (limit 4)"),
    ("read_elsewhere", "the relu is a graph output too"),
    ("through_a_view", "the pool reads the relu transposed"),
])
def test_a_prologue_is_refused(name, why):
    """The relu stays a pointwise kernel of its own, the pool reading what it writes."""
    from helpers import prepared

    _, _, gen, plan = prepared(PROLOGUE / f"{name}.py")
    check_partition(gen.graph, plan)
    assert [g.family for g in plan.groups] == ["pointwise", "pool"], why
    pointwise, pool = plan.groups
    assert not pool.prologue and pool.anchor == pool.nodes[0] and pointwise.outputs[0] in pool.inputs, why


def test_the_recompute_limit_counts_window_elements_per_stride_step():
    """A 3x3 window at stride 2 recomputes each element 9/4 times on average: within the limit; at stride 1 (9)
    it is not. The same graph, only the pool's stride changed."""
    import dataclasses

    from helpers import prepared
    from kerntailor.ir.nodes import Pool
    from kerntailor.plan.fusion import RECOMPUTE_LIMIT

    graph = prepared(PROLOGUE / "overlapping_window.py")[2].graph
    assert RECOMPUTE_LIMIT == 4

    def with_stride(stride: int):
        nodes = tuple(dataclasses.replace(n, stride=(stride, stride)) if isinstance(n, Pool) else n
                      for n in graph.nodes)
        return plan_fusion(dataclasses.replace(graph, nodes=nodes), FAMILIES)

    assert [len(g.prologue) for g in with_stride(2).groups] == [1]
    assert [len(g.prologue) for g in with_stride(1).groups] == [0, 0]
