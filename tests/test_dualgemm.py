"""Dual products (plan/dual.py, codegen/gemm): two matrix products of one left operand, where an epilogue reads
both (SwiGLU's gate and up projections, GeGLU, x @ W1 + x @ W2), are one GEMM kernel with two fp32 accumulators.

- plan (unit): the pair is one group, the second product is not written (unless something else reads it), and the
  group's planned bytes are its inputs and outputs alone; different A views or different N keep two groups;
- codegen (unit): one K loop loads each A tile once for two tl.dots; the schedules the writer does not build for
  two accumulators (split-K, TMA, fp8) are refused with CodegenUnsupported; the library form runs both products
  by torch.matmul and the epilogue in one kernel; the default
  schedule and the search space know the second product;
- interpreter: the generated modules pass the referee (3-d SwiGLU in fp32 and bf16, 2-d GeGLU with biases, a
  stored second product);
- compile: the default dual kernel cross-compiles for sm_90 and gfx942 with matrix instructions and no spills.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import gemm_module, judge, matmul_kernels, prepared
from kerntailor.codegen import CodegenUnsupported, default_schedule
from kerntailor.codegen import gemm as gemm_codegen
from kerntailor.ir.nodes import Matmul

DATA = Path(__file__).parent / "data" / "dualgemm"
SWIGLU, GEGLU, STORED = DATA / "swiglu.py", DATA / "geglu_2d.py", DATA / "sum_stored.py"
TWO_INPUTS, SWIGLUR = DATA / "two_inputs_gated.py", DATA / "widths_differ.py"


def _dual_group(path: Path, dtype: str | None = None):
    _, _, gen, plan = prepared(path, dtype)
    duals = [g for g in plan.groups if sum(isinstance(gen.graph.node(n), Matmul) for n in g.nodes) == 2]
    assert len(duals) == 1, [g.nodes for g in plan.groups]
    return gen, plan, duals[0]


@pytest.mark.parametrize("path", [SWIGLU, GEGLU], ids=lambda p: p.stem)
def test_the_pair_is_one_group_that_writes_only_the_epilogue(path):
    gen, plan, group = _dual_group(path)
    products = [n for n in group.nodes if isinstance(gen.graph.node(n), Matmul)]
    assert not set(products) & set(group.outputs)          # neither product is written
    assert not any(set(products) & set(g.inputs) for g in plan.groups)   # nor read back by another kernel
    # what the kernel moves is its inputs (x, both weights, any biases) and its one output, nothing in between: the
    # planned bytes fell by the second product written and read back, and x read a second time
    graph = gen.graph
    assert set(group.inputs) >= {"x"} and len(group.outputs) == 1
    assert group.bytes_moved == sum(graph.buffer_type(b).nbytes for b in group.inputs + group.outputs)


def test_a_second_product_read_elsewhere_is_a_stored_member():
    gen, plan, group = _dual_group(STORED)
    assert len(plan.groups) == 1
    stored = [n for n in group.outputs if isinstance(gen.graph.node(n), Matmul)]
    assert len(stored) == 1 and len(group.outputs) == 2


@pytest.mark.parametrize("path", [TWO_INPUTS, SWIGLUR], ids=lambda p: p.stem)
def test_different_left_operands_or_widths_keep_two_groups(path):
    _, _, gen, plan = prepared(path)
    matmuls = [g for g in plan.groups if g.family == "matmul"]
    assert len(matmuls) == 2
    assert all(sum(isinstance(gen.graph.node(n), Matmul) for n in g.nodes) == 1 for g in matmuls)


def test_one_k_loop_loads_a_once_for_two_dots():
    module = gemm_module(SWIGLU)
    (kernel, _) = matmul_kernels(SWIGLU, module)
    loop = kernel.source.split("for kt in range(k_lo, k_hi):")[1].split("om = ")[0]
    assert loop.count("tl.load(a_ptrs") == 1 and loop.count("tl.load(b_ptrs") == 1
    assert loop.count("tl.load(b2_ptrs") == 1 and loop.count("tl.dot(") == 2
    assert "v_mm1 = acc2" in kernel.source and kernel.source.count("tl.store(") == 1


@pytest.mark.parametrize("knobs, why", [({"split_k": 2}, "split-K"), ({"precision": "fp8-row"}, "fp8")])
def test_schedules_without_a_dual_form_are_refused(knobs, why):
    with pytest.raises(CodegenUnsupported, match=why):
        gemm_module(GEGLU, knobs, "bf16" if why == "fp8" else None, arch="sm_90")


def test_the_library_form_runs_two_library_products_and_one_epilogue_kernel():
    """LIBRARY=1: both products from torch.matmul before the launch, the kernel reads a tile of each (acc, acc2) and
    runs the epilogue. Measured on the H200 (2026-12-05, swiglu_mlp bf16, 4096 x 4096 -> 14336): the dual kernel's
    best schedule made the MLP 2825 us against torch.compile's 2152 (cuBLAS for both products, one Triton kernel
    for silu * mul); the search had no such form for the group (every library product was refused)."""
    module = gemm_module(SWIGLU, {"LIBRARY": 1}, "bf16", arch="sm_90")
    (kernel, _) = matmul_kernels(SWIGLU, module, "bf16")
    prologue = kernel.launch.host_prologue
    assert len(prologue) == 2 and all("torch.matmul(" in line for line in prologue), prologue
    assert kernel.launch.host_buffers == ("lib_prod", "lib_prod2") and "tl.dot(" not in kernel.source
    assert "acc2 = tl.load(" in kernel.source and "v_mm1 = acc2" in kernel.source


def test_tma_is_refused_for_a_dual_group():
    with pytest.raises(CodegenUnsupported, match="TMA"):
        gemm_module(SWIGLU, {"TMA": 1}, "bf16", arch="sm_90")


def test_default_schedule_and_space_know_the_second_product():
    from kerntailor.search.families import gemm_space
    from kerntailor.targets import get_target

    gen, _, group = _dual_group(SWIGLU)
    sizes = gemm_codegen.work_sizes(gen, group)
    assert sizes["P"] == 2
    schedule = default_schedule(gen, group)
    assert schedule.split_k == 1 and not schedule.gemv and schedule.BLOCK_N <= 64   # fp32: BLOCK_N at most 64
    space = gemm_space(get_target("h200"), dtype="fp32", **sizes)
    assert ("P", 2) in space.sizes
    knobs = {k.name: k.values for k in space.knobs}
    assert knobs["split_k"] == (1,) and knobs["TMA"] == (0,)
    big = {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4}   # two 128 x 128 accumulators over 128 threads
    assert any(c.name.startswith("accumulator <=") and not c.check(big | {"BLOCK_K": 32, "GROUP_M": 1,
                                                                           "num_stages": 2, "split_k": 1})
               for c in space.constraints)


def test_group_work_counts_both_products_on_the_matrix_units():
    from kerntailor.generate.kernels import group_work

    gen, _, group = _dual_group(SWIGLU)
    work, _ = group_work(gen, group, "fp32")
    products = [gen.graph.node(n) for n in group.nodes if isinstance(gen.graph.node(n), Matmul)]
    assert work.flops == sum(p.flops() for p in products)


@pytest.mark.interpreter
@pytest.mark.parametrize("path, dtype, knobs", [(SWIGLU, None, None), (SWIGLU, "bf16", None), (GEGLU, None, None),
                                                (STORED, None, None), (SWIGLU, "bf16", {"LIBRARY": 1}),
                                                (GEGLU, None, {"LIBRARY": 1})],
                         ids=["swiglu", "swiglu_bf16", "geglu_2d", "sum_stored", "swiglu_bf16_library",
                              "geglu_2d_library"])
def test_dual_kernels_pass_the_referee(path, dtype, knobs, tmp_path):
    from kerntailor.verify import VerifySettings

    settings = VerifySettings(edges=False, allow_library=True) if knobs and knobs.get("LIBRARY") else None
    verdict = judge(path, gemm_module(path, knobs, dtype), tmp_path, dtype=dtype, settings=settings)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"


@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("target", ["h200", "mi300x"])
@pytest.mark.parametrize("dtype", [None, "bf16"])
def test_default_dual_kernel_cross_compiles_without_spills(target, dtype):
    from kerntailor.builder import BuildPool
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    t = get_target(target)
    module = gemm_module(SWIGLU, None, dtype, arch=t.arch)
    (kernel, _) = matmul_kernels(SWIGLU, module, dtype)
    with BuildPool(None, timeout_s=300) as pool:
        (result,) = pool.build([kernel_source(module.source, kernel, prepared(SWIGLU, dtype)[2])], [t])
    assert result.ok, result.error
    assert result.facts.spills == 0, result.facts
    if dtype == "bf16" or t.is_amd:   # fp32 tl.dot (ieee) is FMA on sm_90
        assert result.facts.matrix_instr_count > 0, result.facts


@pytest.mark.interpreter
def test_persistent_dual_kernel_walks_every_tile(tmp_path):
    """PERSISTENT=1 (sm_90): the dual loop inside the programs' walk over the tiles."""
    module = gemm_module(GEGLU, {"PERSISTENT": 1, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 4},
                         arch="sm_90")
    (kernel,) = matmul_kernels(GEGLU, module)
    assert "for pid in range(tl.program_id(0), num_m * num_n, NUM_PROGRAMS):" in kernel.source
    assert "acc2 = tl.dot(a, b2, acc2" in kernel.source
    verdict = judge(GEGLU, module, tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
