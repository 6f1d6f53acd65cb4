"""Horizontal products (plan/horizontal.py, codegen/gemm/horizontal.py): matrix products of one left operand with
separate outputs (Q, K and V projections) are one GEMM kernel whose grid covers all their N tiles.

- plan (unit): the products are one group, every output still stored (the attention reads q, k, v), the planned bytes
  fall by the re-reads of A; other A views, another input, a product reading another's output stay apart; at most
  MAX_PRODUCTS a kernel; a dual pair (plan/dual.py) keeps its second product;
- codegen (unit): one branch per product, each a whole tile (its K loop, epilogue and stores); the grid is the sum
  of the products' column tiles; the schedules the writer does not build are refused; the default schedule, the
  search space and the group's work know the products;
- interpreter: the generated modules pass the referee (fp32 and bf16, GQA widths with biases, three returned 2-d
  outputs, persistent programs), and `generate` with one candidate passes it;
- compile: the default kernel cross-compiles for sm_90 and gfx942 with matrix instructions and no spills.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import gemm_module, judge, matmul_kernels, prepared
from kerntailor.codegen import CodegenUnsupported, default_schedule
from kerntailor.codegen import gemm as gemm_codegen
from kerntailor.ir.nodes import Matmul
from kerntailor.plan.horizontal import MAX_PRODUCTS

DATA = Path(__file__).parent / "data" / "qkvgemm"
QKV, GQA, THREE = DATA / "qkv_sdpa.py", DATA / "qkv_gqa.py", DATA / "three_outputs_2d.py"
FIVE, APART, DUAL_AND_THIRD = DATA / "five_products.py", DATA / "apart.py", DATA / "dual_and_third.py"
DECODE = DATA / "decode_step.py"


def _products(gen, group) -> list[str]:
    return [n for n in group.nodes if isinstance(gen.graph.node(n), Matmul)]


def _matmul_groups(path: Path, dtype: str | None = None):
    _, _, gen, plan = prepared(path, dtype)
    return gen, plan, [g for g in plan.groups if g.family == "matmul"]


@pytest.mark.parametrize("path", [QKV, GQA, THREE], ids=lambda p: p.stem)
def test_products_of_one_a_are_one_group_that_stores_every_output(path):
    gen, plan, groups = _matmul_groups(path)
    assert len(groups) == 1
    (group,) = groups
    graph = gen.graph
    products = [graph.node(n) for n in _products(gen, group)]
    assert len(products) == 3
    # every product (or its epilogue's last member) is still written for its reader
    assert len(group.outputs) == 3
    readers = {i for g in plan.groups if g is not group for i in g.inputs}
    assert readers == set() or readers == set(group.outputs)
    # A is read once: the planned bytes are those of three GEMMs less two reads of A
    a = products[0].operands[0].base
    alone = sum(graph.buffer_type(b).nbytes for b in group.inputs + group.outputs)
    assert group.bytes_moved == alone
    assert a in group.inputs and group.inputs.count(a) == 1


def test_gqa_products_of_different_widths_keep_their_own_biases():
    gen, _, (group,) = _matmul_groups(GQA)
    widths = [gen.graph.node(n).n for n in _products(gen, group)]
    assert widths == [64, 32, 32]
    from kerntailor.plan.horizontal import branches

    split = branches([gen.graph.node(n) for n in group.nodes])
    assert [len(b) for b in split] == [2, 2, 2]   # each product and its bias add


def test_other_a_views_inputs_and_readers_stay_apart():
    gen, _, groups = _matmul_groups(APART)
    by_products = sorted(tuple(_products(gen, g)) for g in groups)
    q, k, v, s, y = (n.name for n in gen.graph.nodes if isinstance(n, Matmul))
    # q and v share a kernel; k reads q's output, s reads a slice of x (another view, another K), y another input
    assert by_products == sorted([(q, v), (k,), (s,), (y,)])


def test_matrix_vector_products_keep_their_gemv_kernels():
    gen, _, groups = _matmul_groups(DECODE)
    assert [len(_products(gen, g)) for g in groups] == [1, 1, 1]


def test_at_most_max_products_share_a_kernel():
    gen, _, groups = _matmul_groups(FIVE)
    assert sorted(len(_products(gen, g)) for g in groups) == [1, MAX_PRODUCTS]


def test_a_dual_pair_keeps_its_second_product_and_a_third_stays_apart():
    from kerntailor.plan.horizontal import branches

    gen, _, groups = _matmul_groups(DUAL_AND_THIRD)
    assert sorted(len(_products(gen, g)) for g in groups) == [1, 2]
    dual = next(g for g in groups if len(_products(gen, g)) == 2)
    assert branches([gen.graph.node(n) for n in dual.nodes]) is None   # a member reads both: dual, not horizontal
    assert len(dual.outputs) == 1                                        # the up product is never written


def test_one_branch_per_product_each_a_whole_tile():
    module = gemm_module(GQA, None, "bf16")
    (kernel,) = matmul_kernels(GQA, module, "bf16")
    src = kernel.source
    assert src.count("for kt in range(k_lo, k_hi):") == 3
    assert src.count("acc = tl.zeros([BLOCK_M, BLOCK_N]") == 3 and "acc2" not in src
    branches = src.split("_tiles\n")[1:]   # each `if ...:  # mmX's tiles` header
    assert len(branches) == 3
    for body in branches:
        assert body.count("tl.store(") == 1 and body.count("_bias_ptr") == 1
    assert "if (pid_n < end0):" in src and "if (pid_n >= end1):" in src
    # the grid: the row tiles times the sum of every product's column tiles
    assert re.search(r"\* \(triton\.cdiv\(.+\) \+ triton\.cdiv\(.+\) \+ triton\.cdiv\(", module.source)


@pytest.mark.parametrize("knobs, why", [({"split_k": 2}, "split-K"), ({"precision": "fp8-row"}, "fp8"),
                                        ({"TMA": 1}, "TMA")])
def test_schedules_without_a_horizontal_form_are_refused(knobs, why):
    with pytest.raises(CodegenUnsupported, match=f"horizontal products under .*{why}"):
        gemm_module(QKV, knobs, "bf16", arch="sm_90")


@pytest.mark.interpreter
def test_the_library_form_of_products_alone_is_one_library_call_each(tmp_path):
    """Q, K and V projections with no epilogue under LIBRARY=1: three torch.matmul calls on the host, no kernel (the
    horizontal kernel's alternative the search times; with an epilogue, as GQA's biases, the form is refused)."""
    from kerntailor.ir.nodes import Matmul

    _, _, gen, plan = prepared(QKV, "bf16")
    (group,) = [g for g in plan.groups if sum(isinstance(gen.graph.node(n), Matmul) for n in g.nodes) == 3]
    module = gemm_module(QKV, {"LIBRARY": 1}, "bf16", arch="sm_90")
    (kernel,) = [k for k in module.kernels if k.group == group.name]
    assert kernel.source == "" and len(kernel.launch.host_prologue) == 3
    assert kernel.launch.host_buffers == tuple(group.outputs) and set(group.outputs) == set(group.nodes)
    from kerntailor.verify import VerifySettings

    verdict = judge(QKV, module, tmp_path, "bf16", settings=VerifySettings(edges=False, allow_library=True))
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
    with pytest.raises(CodegenUnsupported, match="horizontal products under the library product"):
        gemm_module(GQA, {"LIBRARY": 1}, "bf16", arch="sm_90")


def test_default_schedule_space_and_work_know_the_products():
    from kerntailor.generate.kernels import group_work
    from kerntailor.search.families import gemm_space
    from kerntailor.targets import get_target

    gen, _, (group,) = _matmul_groups(GQA)
    sizes = gemm_codegen.work_sizes(gen, group)
    assert sizes == {"M": 40, "N": 64 + 32 + 32, "K": 64, "H": 3}
    schedule = default_schedule(gen, group)
    assert schedule.split_k == 1 and not schedule.gemv and schedule.BLOCK_N == 64   # the widest product's
    space = gemm_space(get_target("h200"), dtype="fp32", **sizes)
    assert ("H", 3) in space.sizes
    knobs = {k.name: k.values for k in space.knobs}
    assert knobs["split_k"] == (1,) and knobs["TMA"] == (0,)
    work, _ = group_work(gen, group, "fp32")
    assert work.flops == sum(gen.graph.node(n).flops() for n in _products(gen, group))
    assert work.min_bytes == group.bytes_moved   # A once, each B and each output once


@pytest.mark.interpreter
@pytest.mark.parametrize("path, dtype", [(QKV, None), (QKV, "bf16"), (GQA, "bf16"), (THREE, None), (APART, None)],
                         ids=["qkv", "qkv_bf16", "gqa_bf16", "three_2d", "apart"])
def test_horizontal_kernels_pass_the_referee(path, dtype, tmp_path):
    verdict = judge(path, gemm_module(path, None, dtype), tmp_path, dtype=dtype)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"


@pytest.mark.interpreter
def test_persistent_horizontal_kernel_walks_every_tile(tmp_path):
    """PERSISTENT=1 (sm_90): the products' branches inside the programs' walk over all their tiles."""
    module = gemm_module(THREE, {"PERSISTENT": 1, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 4},
                         arch="sm_90")
    (kernel,) = matmul_kernels(THREE, module)
    assert "for pid in range(tl.program_id(0), num_m * num_n, NUM_PROGRAMS):" in kernel.source
    verdict = judge(THREE, module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"


@pytest.mark.interpreter
@pytest.mark.slow
def test_generate_with_one_candidate_passes_the_referee(tmp_path, monkeypatch):
    import kerntailor.generate.pipeline as pipeline
    from kerntailor.generate import GenerateSettings, generate

    monkeypatch.setattr(pipeline, "detect_local_target", lambda *a, **k: None)
    result = generate(GQA, GenerateSettings(target="h200", dtype="bf16", max_candidates=1, use_store=False,
                                            out_dir=tmp_path / "out"))
    assert result.status == "generated", result
    assert "if (pid_n >= end1):" in (tmp_path / "out" / "kernel.py").read_text()


@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("target", ["h200", "mi300x"])
@pytest.mark.parametrize("dtype", [None, "bf16"])
def test_default_horizontal_kernel_cross_compiles_without_spills(target, dtype):
    from kerntailor.builder import BuildPool
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    t = get_target(target)
    module = gemm_module(QKV, None, dtype, arch=t.arch)
    (kernel,) = matmul_kernels(QKV, module, dtype)
    with BuildPool(None, timeout_s=300) as pool:
        (result,) = pool.build([kernel_source(module.source, kernel, prepared(QKV, dtype)[2])], [t])
    assert result.ok, result.error
    assert result.facts.spills == 0, result.facts
    if dtype == "bf16" or t.is_amd:   # fp32 tl.dot (ieee) is FMA on sm_90
        assert result.facts.matrix_instr_count > 0, result.facts
