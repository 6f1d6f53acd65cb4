"""Groups codegen used to refuse on the planner's first plan, found by benchmarks/codegen_refusals.py on KernelBench
(benchmarks/data/cpu_2026-12-05/): each now one kernel, judged by the referee under the interpreter and
cross-compiled for sm_90 and gfx942. tests/data/refusals holds one problem file per cause."""

from __future__ import annotations

import pytest

from helpers import DATA, make_module, prepared, verify
from kerntailor.codegen.fused.space import walk
from kerntailor.ir.expr import Const, Load

REFUSALS = DATA / "refusals"
KEEPDIM = REFUSALS / "keepdim_reductions.py"
LOOPED = {"reduction": {"persistent": False, "RBLOCK": 16}}   # a pass over the row per stage


def _cross_compile(modules, tmp_path) -> None:
    """Every kernel of `modules` builds for gfx942 (mi300x) and sm_90 (h200)."""
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    sources = [kernel_source(m.source, k) for m in modules for k in m.kernels]
    targets = [get_target("mi300x"), get_target("h200")]
    assert [t.arch for t in targets] == ["gfx942", "sm_90"]
    results = build_many(sources, targets, cache_dir=tmp_path / "build-cache")
    assert len(results) == len(sources) * len(targets)
    for r in results:
        assert r.ok, f"{r.target}: {r.error}"


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
    _cross_compile((make_module(KEEPDIM), make_module(KEEPDIM, LOOPED)), tmp_path)


# --- a gather read through a reshaping view: cut before the reader, not a kernel per member ------------------------

GATHER_NORM = REFUSALS / "gather_then_layernorm.py"


def test_a_gather_read_as_reshaped_rows_names_its_reader():
    """Swin's reverse shift as torch decomposes torch.roll (a gather along H, then W) before its post-norm: the
    gathers are in the (B, H, W, C) map's space, the norm's rows (B, H*W, C). Codegen refuses the group, and names
    the first member that reads a gather through the reshape so that generate cuts there (it named none: every
    member became a kernel of its own, 17 kernels here)."""
    from kerntailor.codegen import GroupUnsupported

    _, _, gen, plan = prepared(GATHER_NORM)
    group = next(g for g in plan.groups if g.family == "reduction")
    with pytest.raises(GroupUnsupported) as refused:
        make_module(GATHER_NORM)
    reader = gen.graph.node(refused.value.node or "")
    gathers = _gathers(gen.graph, group.nodes)
    assert gathers and reader.name in group.nodes and reader.name not in gathers
    assert any(v.base in gathers for v in reader.operands)


def _gathers(graph, names) -> set[str]:
    return {n for n in names if any(isinstance(e, Load) and e.gather is not None
                                    for e in walk(getattr(graph.node(n), "expr", Const(0, "i32"))))}


@pytest.mark.interpreter
def test_the_norm_after_a_gather_is_one_kernel_and_passes_the_referee(tmp_path):
    from helpers import judge
    from kerntailor.generate.pipeline import GenerateSettings, first_module

    _, _, gen, plan = prepared(GATHER_NORM)
    first = first_module(GATHER_NORM, GenerateSettings(target="h200", out_dir=tmp_path / "out"))
    sums = [n.name for n in gen.graph.nodes if n.family == "reduction"]
    norm = [k for k in first.module.kernels if all(f"v_{s} " in k.source for s in sums)]
    assert len(sums) == 2 and len(norm) == 1, [k.kernel_name for k in first.module.kernels]
    # the planned groups, less the norm's, plus the norm, its two gathers (a gather of a gather is cut) apart
    assert len(first.module.kernels) == len(plan.groups) + 2
    verdict = judge(GATHER_NORM, first.module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{first.module.source}"


# --- torch.roll over two axes: the slices of each axis, fused with what reads them ---------------------------------

ROLL_NORM = REFUSALS / "roll_then_layernorm.py"     # roll, then the tokens' LayerNorm: one kernel
ROLL_WINDOWS = REFUSALS / "roll_windows.py"         # x * 2, roll, then a window partition
ROLL_SIZES = REFUSALS / "roll_sizes.py"             # tanh, roll, + 1, every size varying between variants
ROLLS = [ROLL_NORM, ROLL_WINDOWS, ROLL_SIZES]


@pytest.mark.parametrize("path", ROLLS, ids=["norm", "windows", "sizes"])
def test_a_roll_is_captured_as_slices_and_written_as_planned(path):
    """capture takes torch.roll over named dims as, per dim in turn, the cat of its two slices (export.py's
    decomposition): no gather, no index tensor. The first dim's cat (and what it reads) is read by the second's
    only at shifts along the second's axis, through masked loads: recomputed there (an inline member), so the
    planner's groups are each one kernel, the roll with the pointwise before it and the norm after it."""
    _, _, gen, plan = prepared(path)
    assert not _gathers(gen.graph, [n.name for n in gen.graph.nodes])
    assert not any(n.name.startswith("iota") for n in gen.graph.nodes)
    cats = [n.name for n in gen.graph.nodes if n.name.startswith("cat")]
    assert len(cats) == 2 and plan.group_of(cats[0]) is plan.group_of(cats[1])
    assert len(make_module(path).kernels) == len(plan.groups)
    if path == ROLL_NORM:
        assert [g.family for g in plan.groups] == ["reduction"]


@pytest.mark.interpreter
@pytest.mark.parametrize("path", ROLLS, ids=["norm", "windows", "sizes"])
def test_a_roll_as_slices_passes_the_referee(path, tmp_path):
    verify(path, make_module(path), tmp_path)


@pytest.mark.compile
def test_a_roll_as_slices_cross_compiles(tmp_path):
    _cross_compile((make_module(p) for p in ROLLS), tmp_path)


# --- torch.prod over an axis: a multiply reduction in every layout the fused writer has for a sum -------------------

PROD = REFUSALS / "prod_reductions.py"            # last axis + epilogue, strided axis kept, raw x (special values)
PROD_LONG = REFUSALS / "prod_long_rows.py"        # few long rows, and the whole tensor
SPLIT_ROWS = {"reduction": {"XBLOCK": 1, "RBLOCK": 64, "SPLIT": 4, "persistent": False, "num_warps": 4}}
COOP_1 = {"reduction": SPLIT_ROWS["reduction"] | {"SPLIT": 1, "COOP": 1}}   # the interpreter waits on no one else
PROD_FORMS = [(PROD, None), (PROD, LOOPED), (PROD_LONG, None), (PROD_LONG, SPLIT_ROWS), (PROD_LONG, COOP_1)]
PROD_IDS = ["persistent", "looped", "long-persistent", "split", "cooperative"]


def test_products_are_written_and_counted_as_sums():
    """Every planned product group is one kernel that reduces with kernel.py's `_row_prod` (no library path), the
    split forms combining their chunks' products; the cost model's work counts a product's elements as a sum's."""
    from dataclasses import replace

    from kerntailor.generate.kernels import group_work

    for path, knobs in PROD_FORMS:
        _, _, gen, plan = prepared(path)
        module = make_module(path, knobs)
        assert len(module.kernels) == len(plan.groups)
        for group, kernel in zip(plan.groups, module.kernels, strict=True):
            products = [n for n in group.nodes if gen.graph.node(n).family == "reduction"]
            assert products and all(f"v_{n} = _row_prod(" in kernel.source for n in products), kernel.source
    _, _, gen, plan = prepared(PROD)
    node = gen.graph.node("prod0")
    assert node.op == "prod" and node.flops() == replace(node, op="sum").flops() == node.operands[0].numel
    group = next(g for g in plan.groups if "prod0" in g.nodes)
    assert group_work(gen, group, "fp32")[0].flops == sum(gen.graph.node(n).flops() for n in group.nodes)


@pytest.mark.interpreter
@pytest.mark.parametrize("path, knobs", PROD_FORMS, ids=PROD_IDS)
def test_products_pass_the_referee(path, knobs, tmp_path):
    verify(path, make_module(path, knobs), tmp_path)


@pytest.mark.interpreter
def test_products_of_bf16_accumulate_in_fp32_and_pass_the_referee(tmp_path):
    """torch.prod of bf16 returns bf16; the kernel multiplies in fp32 and rounds once at the store."""
    module = make_module(PROD, LOOPED, dtype="bf16")
    assert "tl.full([XBLOCK, RBLOCK], 1.0, tl.float32)" in module.source
    verify(PROD, module, tmp_path, dtype="bf16")


@pytest.mark.compile
def test_products_cross_compile(tmp_path):
    _cross_compile((make_module(p, knobs) for p, knobs in PROD_FORMS), tmp_path)


# --- a scan's epilogue reading the scan's row end (Mamba2's exp(A_cumsum[..., -1:] - A_cumsum)) ---------------------

ROW_END = REFUSALS / "scan_row_end.py"
SHORT_CHUNKS = {"scan": {"XBLOCK": 4, "RBLOCK": 16}}   # rows of 16 to 40: the first pass carries across chunks


@pytest.mark.parametrize("knobs", [None, SHORT_CHUNKS], ids=["default", "chunked"])
def test_a_scans_row_end_is_read_as_a_row_value_in_one_kernel(knobs):
    """The epilogue's read of the scan at its row's last element, broadcast along the row, is the row's final carry:
    a first pass over the row computes it (the scan alone, the same chunks and carries, so the value is the bits
    the scan stores there), then the scan and its epilogue as before. Refused before (a view of stride 0 along the
    row), and generate cut the group before the reader."""
    _, _, gen, plan = prepared(ROW_END)
    module = make_module(ROW_END, knobs)
    assert len(module.kernels) == len(plan.groups) == 2
    for scan, kernel in zip(("cumsum0", "cumprod0"), module.kernels, strict=True):
        assert f"end_{scan} = carry" in kernel.source and kernel.source.count("for roffset in range(") == 2


def test_other_reads_of_a_scan_through_a_view_name_their_reader():
    """A read at another fixed position of the row (its first) is no final carry: still refused, naming the reader
    so that generate cuts the group there."""
    from kerntailor.codegen import GroupUnsupported

    path = REFUSALS / "scan_row_start.py"
    _, _, gen, plan = prepared(path)
    with pytest.raises(GroupUnsupported) as refused:
        make_module(path)
    reader = gen.graph.node(refused.value.node or "")
    assert [g.family for g in plan.groups] == ["scan"] and any(v.base == "cumsum0" and v.strides[-1] == 0
                                                                for v in reader.operands)


@pytest.mark.interpreter
@pytest.mark.parametrize("knobs", [None, SHORT_CHUNKS], ids=["default", "chunked"])
def test_a_scans_row_end_passes_the_referee(knobs, tmp_path):
    verify(ROW_END, make_module(ROW_END, knobs), tmp_path)


@pytest.mark.compile
def test_a_scans_row_end_cross_compiles(tmp_path):
    _cross_compile((make_module(ROW_END), make_module(ROW_END, SHORT_CHUNKS)), tmp_path)


# --- a per-row member reading a full-size one where each row has one element ---------------------------------------

ONE_ELEMENT = REFUSALS / "one_element_rows.py"


@pytest.mark.parametrize("knobs", [None, LOOPED], ids=["persistent", "looped"])
def test_a_full_value_of_one_element_rows_is_read_per_row_in_one_kernel(knobs):
    """The reduced axis has one element at every size: the per-row member reads the full-size value at the row's
    element, recomputed there (as a gather at index 0), and the planner's group is one kernel."""
    _, _, gen, plan = prepared(ONE_ELEMENT)
    (group,) = [g for g in plan.groups if g.family == "reduction"]
    assert any(v.base in group.nodes and v.shape != gen.graph.node(v.base).out.shape
               for n in group.nodes for v in gen.graph.node(n).operands)   # the cause is in the plan
    module = make_module(ONE_ELEMENT, knobs)
    assert len(module.kernels) == len(plan.groups)


@pytest.mark.interpreter
@pytest.mark.parametrize("knobs", [None, LOOPED], ids=["persistent", "looped"])
def test_a_full_value_of_one_element_rows_passes_the_referee(knobs, tmp_path):
    verify(ONE_ELEMENT, make_module(ONE_ELEMENT, knobs), tmp_path)


@pytest.mark.compile
def test_a_full_value_of_one_element_rows_cross_compiles(tmp_path):
    _cross_compile((make_module(ONE_ELEMENT), make_module(ONE_ELEMENT, LOOPED)), tmp_path)
