"""Codegen for pointwise and reduction fusion groups (codegen/fused.py, emitted by codegen/emit.py).

- golden files: in tests/test_codegen_golden.py (every family's writer paths).
- interpreter: generated modules pass the referee (verify_candidate) under TRITON_INTERPRET=1 on CPU for
  each schedule shape: pointwise, persistent rows, looped/online rows, split whole-tensor reduction,
  non-trailing reduction with XBLOCK > 1, gather recompute (cross-entropy), bf16.
- what codegen refuses (CodegenUnsupported), sizes as runtime arguments, and cross-compilation of every
  generated kernel for an AMD and an NVIDIA target.

Small problems of our own live in tests/data/codegen_fused/ (the suite's default sizes are only traced on
meta tensors; the referee runs the small variants).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from helpers import DATA, L1, ROOT, make_module, numbers_in_code, prepared, verify
from kerntailor.codegen import default_schedule, generate_module
from kerntailor.codegen.fused import ReductionSchedule
from kerntailor.plan.fusion import regrouped
from kerntailor.problem import load_problem

FUSED = DATA / "codegen_fused"
# the divisions a row-tiled kernel may make: a row index, once per row, or the row length seen as a multiple of ALIGN
ROW_DIVISION = r"\s*(i\d+ = xindex (//|%) s\d+|rlen = s\d+ // ALIGN \* ALIGN)\s*(#.*)?$"


def reduction_module(path, knobs: dict | None = None, dtype: str | None = None):
    """The generated module with `knobs` merged into the default schedule of every reduction group."""
    return make_module(path, {"reduction": knobs} if knobs else None, dtype)


def test_generation_is_deterministic():
    a = make_module(L1 / "cross_entropy.py").source
    b = make_module(L1 / "cross_entropy.py").source
    assert a == b


# --- the referee under the interpreter --------------------------------------------------------------------

@pytest.mark.interpreter
def test_pointwise_relu(tmp_path):
    module = make_module(L1 / "relu.py")
    assert len(module.kernels) == 1 and "pointwise" in module.kernels[0].kernel_name
    verify(L1 / "relu.py", module, tmp_path)


@pytest.mark.interpreter
def test_looped_online_softmax_long_rows(tmp_path):
    path = L1 / "softmax_long_rows.py"
    spec, _, gen, plan = prepared(path)
    # the declared variants make rows longer than one block: default knobs already loop; force a small block
    assert default_schedule(gen, plan.groups[0]).persistent is False
    module = reduction_module(path, {"XBLOCK": 1, "RBLOCK": 1024, "persistent": False, "num_warps": 4})
    source = module.kernels[0].source
    assert "RBLOCK" not in dict(module.kernels[0].launch.host_constexprs)   # a looped kernel: RBLOCK is the knob's
    assert "for roffset in range(0, " in source
    assert "online: rescale the running sum" in source   # max and sum in one pass
    assert "tl.max(x_max0, axis=1" not in source          # per lane: no cross-lane reduction inside the loop
    # the online pass, then the store pass, which walks the row backwards (its first chunks are still in L2)
    assert source.count("for roffset") == 1 and source.count("for rstep") == 1
    assert source.index("for roffset") < source.index("for rstep")
    verify(path, module, tmp_path)


@pytest.mark.interpreter
def test_cross_entropy_gather_recompute(tmp_path):
    path = L1 / "cross_entropy.py"
    module = make_module(path)
    k0 = module.kernels[0].source
    # logp[target] is recomputed from the logits at the target (one load per row), never stored as a row
    assert "v_gather0" in k0
    assert all("pw3_ptr" not in k.source for k in module.kernels)
    assert re.search(r"tl\.load\(logits_ptr \+ \(i0 \* (s\d+|rlen) \+ \(v_pw5\)", k0)
    verify(path, module, tmp_path)


@pytest.mark.interpreter
def test_split_whole_tensor_sum(tmp_path):
    path = FUSED / "tiny_sum_all.py"
    module = reduction_module(path, {"XBLOCK": 1, "RBLOCK": 64, "SPLIT": 8, "persistent": False, "num_warps": 4})
    k = module.kernels[0]
    assert "tl.atomic_add(counter_ptr" in k.source
    assert dict(k.constexprs)["SPLIT"] == 8
    (axis,) = k.launch.grid
    ((programs, block),) = axis.factors
    assert programs.evaluate({}) == 8 and block == 1
    assert {s.buffer for s in k.scratch} == {"partials", "counter"}
    assert "torch.zeros(8," in module.source     # partials zeroed per call
    verify(path, module, tmp_path)


@pytest.mark.interpreter
def test_split_integer_sum_stays_exact(tmp_path):
    # int64 values near 2**30: fp32 partials would round the total (the referee wants an exact match)
    path = FUSED / "tiny_int_sum_all.py"
    module = reduction_module(path, {"XBLOCK": 1, "RBLOCK": 64, "SPLIT": 8, "persistent": False, "num_warps": 4})
    assert {s.buffer: s.dtype for s in module.kernels[0].scratch}["partials"] == "i64"
    verify(path, module, tmp_path)


@pytest.mark.interpreter
def test_integer_row_max_is_exact(tmp_path):
    path = FUSED / "tiny_int_amax.py"
    verify(path, make_module(path), tmp_path)


@pytest.mark.interpreter
def test_non_trailing_reduction_with_many_rows_per_program(tmp_path):
    path = FUSED / "tiny_sum_axis0.py"
    _, _, gen, plan = prepared(path)
    assert plan.groups[0].reduce_axes == (0,)
    assert default_schedule(gen, plan.groups[0]).XBLOCK > 1
    module = reduction_module(path, {"XBLOCK": 16, "RBLOCK": 32, "persistent": False, "num_warps": 4})
    assert "XBLOCK=16" in module.source
    verify(path, module, tmp_path)


@pytest.mark.interpreter
def test_layernorm_bf16(tmp_path):
    path = L1 / "layernorm.py"
    module = make_module(path, dtype="bf16")
    source = module.kernels[0].source
    assert ".to(tl.float32)" in source        # bf16 loads compute in fp32
    assert ".to(tl.bfloat16)" in source       # and round once at the store
    assert "dtype=torch.bfloat16" in module.source
    verdict = verify(path, module, tmp_path, dtype="bf16")
    assert "bf16" in verdict.reason


@pytest.mark.interpreter
@pytest.mark.parametrize("schedule", [
    {"XBLOCK": 1, "RBLOCK": 512, "persistent": True, "num_warps": 4},
    {"XBLOCK": 2, "RBLOCK": 64, "persistent": False, "num_warps": 4},
], ids=["persistent", "looped"])
def test_persistent_and_looped_schedules_of_one_problem(schedule, tmp_path):
    path = FUSED / "tiny_layernorm.py"
    module = reduction_module(path, schedule)
    k = module.kernels[0]
    assert ("RBLOCK" in dict(k.launch.host_constexprs)) == schedule["persistent"]   # chosen per call to cover the row
    if schedule["persistent"]:
        assert "for roffset" not in k.source
        assert "RBLOCK=triton.next_power_of_2(" in module.source   # the block covers the row at run time
    else:
        assert "for roffset" in k.source and "RBLOCK=64" in module.source
    verify(path, module, tmp_path)


@pytest.mark.interpreter
@pytest.mark.parametrize("schedule", [
    None,
    {"XBLOCK": 2, "RBLOCK": 64, "persistent": False, "num_warps": 4},
    {"XBLOCK": 1, "RBLOCK": 1024, "persistent": True, "num_warps": 4},
], ids=["default", "looped-small-chunks", "persistent"])
def test_groupnorm_is_one_kernel(schedule, tmp_path):
    """The per-channel affine on (N, C, H, W) joins the statistics over (N, G, C/G·H·W): one kernel over
    (N, G, C/G, H·W); looped, a Welford pass then one normalize-and-affine pass (x read twice, y written
    once), the channel a scalar loop around contiguous chunks (no division per element)."""
    path = L1 / "groupnorm.py"
    module = reduction_module(path, schedule)
    (kernel,) = module.kernels
    source = kernel.source
    assert "p_gn_weight_ptr" in source and "p_gn_bias_ptr" in source
    if schedule is None or not schedule["persistent"]:
        assert "Welford" in source
        assert source.count("for roffset") + source.count("for rstep") == 2     # statistics, then the output
        assert source.count("tl.load(x_ptr") == 2
        if schedule is None:   # chunks of 4096 fit H·W: the channel is a scalar loop, no per-element division
            assert "for rq in range(" in source or "for rqq in range(" in source
            assert not re.search(r"rindex (//|%)", source)
    else:
        assert "for roffset" not in source and source.count("tl.load(x_ptr") == 1
    verify(path, module, tmp_path)


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype", [None, "bf16"])
def test_rotary_embedding_is_one_tiled_kernel(dtype, tmp_path):
    """-x[..., d/2:] is recomputed inside the cat that reads it (not written), and the kernel walks
    [rows, head_dim] tiles: the only divisions are of row indices."""
    path = ROOT / "problems" / "level3" / "rotary_embedding.py"
    module = make_module(path, dtype=dtype)
    (kernel,) = module.kernels
    assert "RBLOCK" in dict(kernel.launch.host_constexprs) and "RBLOCK=triton.next_power_of_2(" in module.source
    for line in kernel.source.splitlines():
        if "//" in line.split("#")[0] or " % " in line.split("#")[0]:
            assert re.match(ROW_DIVISION, line), line   # per row, not per element
    assert "pw0_ptr" not in kernel.source
    verify(path, module, tmp_path, dtype=dtype)


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype", [None, "bf16"])
def test_mish_computes_tanh_of_softplus_from_one_exp(dtype, tmp_path):
    path = L1 / "mish.py"
    module = make_module(path, dtype=dtype)
    source = module.kernels[0].source
    assert "_tanh_softplus(" in source and "_log1p(" not in source and "_tanh(" not in source
    assert source.count("tl.load(") == 1 and source.count("tl.store(") == 1
    verify(path, module, tmp_path, dtype=dtype)


@pytest.mark.interpreter
def test_broadcast_operand_uses_row_tiles(tmp_path):
    """A per-channel operand of batchnorm: long rows in chunks, one chunk of one row per program, so the channel
    is divided once per program (row and chunk from the program id) and never per element, with no loop."""
    path = L1 / "batchnorm2d_eval.py"
    module = make_module(path)
    big = module.kernels[-1].source
    assert "for roffset" not in big and not re.search(r"rindex (//|%)", big)
    assert "program_id(0) // nchunks" in big and "program_id(0) % nchunks" in big
    divisions = [line for line in big.splitlines() if re.search(r"(//|%) ", line.split("#")[0])]
    assert all("nchunks" in line or re.match(ROW_DIVISION, line) for line in divisions), divisions
    verify(path, module, tmp_path)


# --- what codegen refuses ----------------------------------------------------------------------------------

def test_attention_is_a_generated_kernel_not_a_library_call():
    """Fused attention has a generator now (codegen/attention.py; tests/test_codegen_attention.py): no library call
    of SDPA in kernel.py."""
    module = make_module(FUSED / "tiny_sdpa.py")
    assert "torch.ops.aten.scaled_dot_product_attention.default(" not in module.source
    assert "@triton.jit" in module.source


def test_an_integer_whole_tensor_sum_can_be_split():
    from kerntailor.codegen.fused import split_possible

    _, _, gen, plan = prepared(L1 / "cross_entropy.py")
    # the count of non-ignored targets (an int64 sum) has a group of its own: it may be split
    counts = [g for g in plan.groups if any(n.startswith("sum1") for n in g.nodes)]
    assert counts and split_possible(gen, counts[0])


def test_split_of_many_rows_splits_each_row():
    """The whole-tensor split (one kernel, an atomic counter) is for one row; SPLIT on a group of many rows splits
    each row instead (two kernels: tests/test_codegen_splitrows.py)."""
    from kerntailor.codegen.fused import split_possible

    _, _, gen, plan = prepared(FUSED / "tiny_softmax.py")
    assert not split_possible(gen, plan.groups[0])
    module = reduction_module(FUSED / "tiny_softmax.py", {"XBLOCK": 1, "RBLOCK": 64, "SPLIT": 8, "persistent": False})
    assert len(module.kernels[0].launches) == 2 and "atomic" not in module.source


# --- sizes are runtime arguments ---------------------------------------------------------------------------

def _varying_default_sizes(gen) -> set[int]:
    return {gen.graph.inputs[d.input].type.shape[d.axis] for d in gen.dims if not d.node}


@pytest.mark.parametrize("name, knobs, distinctive", [
    ("softmax_long_rows", {"XBLOCK": 1, "RBLOCK": 1024, "persistent": False, "num_warps": 4}, "393216"),
    ("softmax_long_rows", None, "393216"),
    ("cross_entropy", None, "128256"),
    ("layernorm", None, "16384"),
])
def test_no_size_literals_of_varying_sizes(name, knobs, distinctive):
    path = L1 / f"{name}.py"
    _, _, gen, _ = prepared(path)
    module = reduction_module(path, knobs)
    # nowhere after the header (which quotes the problem's description), comments included
    body = module.source.split('"""', 2)[2]
    assert distinctive not in body
    # and no varying size of the traced variant as a literal in any kernel
    varying = _varying_default_sizes(gen)
    assert varying
    for k in module.kernels:
        assert not (numbers_in_code(k.source) & varying), (k.kernel_name, numbers_in_code(k.source) & varying)
        assert k.size_args   # the sizes travel as arguments
    if knobs is not None:  # no block size that happens to equal a dim: nothing varying anywhere in the code
        assert not (numbers_in_code(module.source) & varying)


# --- cross-compilation of every generated kernel ----------------------------------------------------------

@pytest.mark.compile
@pytest.mark.parametrize("name", ["softmax_short_rows", "cross_entropy"])
def test_every_kernel_cross_compiles(name, tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path = L1 / f"{name}.py"
    module = make_module(path)
    sources = [kernel_source(module.source, kernel) for kernel in module.kernels]
    targets = [get_target("mi300x"), get_target("h200")]
    assert [t.arch for t in targets] == ["gfx942", "sm_90"]
    results = build_many(sources, targets, cache_dir=tmp_path / "build-cache")
    assert len(results) == len(sources) * len(targets)
    for r in results:
        assert r.ok, f"{name} on {r.target}: {r.error}"
        assert r.facts is not None and r.facts.registers > 0, (r.target, r.facts)


def test_the_strided_default_halves_its_rows_for_a_concatenation_of_many_pieces():
    """BatchNorm statistics over 24 concatenated pieces: each is a tile-sized masked load live at once, so the
    strided default (64 rows of 64, 8 warps) would take 16 + 27 x 16 registers a thread; it takes 16 rows (124)."""
    path = FUSED / "batchnorm_train_cat.py"
    _, _, gen, plan = prepared(path)
    (group,) = plan.groups
    schedule = default_schedule(gen, group)
    assert (schedule.XBLOCK, schedule.RBLOCK, schedule.num_warps) == (16, 64, 8), schedule
    plain = prepared(FUSED / "tiny_batchnorm3d_train.py")
    assert default_schedule(plain[2], plain[3].groups[0]).XBLOCK == 64   # no concatenation: unchanged


@pytest.mark.interpreter
def test_a_concatenation_of_many_pieces_reduces_correctly_at_the_smaller_tile(tmp_path):
    path = FUSED / "batchnorm_train_cat.py"
    module = make_module(path)
    assert "{'XBLOCK': 16, 'RBLOCK': 64" in module.source   # the header's schedule line
    verify(path, module, tmp_path)


@pytest.mark.compile
def test_a_concatenation_of_many_pieces_reduces_without_spilling(tmp_path):
    """The 24-piece BatchNorm under its default (16 rows), cross-compiled: no VGPR spill on gfx942, at most a few
    bytes on sm_90 (16 B, 8 B of stack; at 64 rows sm_90 spilled 10,908 B (DenseNet121's 25 pieces: 12.8 KB) and
    gfx942 took 232 VGPRs; triton 3.6.0, 2026-12-04). gfx942 still spills ~570 SGPRs into VGPR lanes at any
    tile: the 24 pointers and their offsets are kernel arguments."""
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path = FUSED / "batchnorm_train_cat.py"
    for arch, target in (("gfx942", "mi300x"), ("sm_90", "h200")):
        module = make_module(path, arch=arch)
        sources = [kernel_source(module.source, kernel) for kernel in module.kernels]
        for r in build_many(sources, [get_target(target)], cache_dir=tmp_path / "build-cache"):
            assert r.ok, f"{arch}: {r.error}"
            assert r.facts.scratch_bytes <= 64 and r.facts.spills <= (64 if arch == "sm_90" else 1000), (arch, r.facts)
            assert r.facts.registers <= 128 and not r.facts.vgpr_spills, (arch, r.facts)


@pytest.mark.compile
def test_reduction_kernels_are_built_without_fma_contraction(tmp_path):
    """decode_scores' softmax (decode_attention's, before that became one attention kernel), looped: the first
    pass takes the row max of x·s, the second computes
    exp(x·s − max). With FMA contraction the second pass's x·s is unrounded (fma(x, s, −max)) while the
    max was rounded: on the H200 the outlier draw failed the referee by 8.7e-4 (2026-12-01). Such kernels
    (more than one pass, a product feeding a row max) are compiled with enable_fp_fusion=False, so both
    passes round alike: no fma in the PTX; the same kernel with contraction allowed has them (the check
    is live). Kernels without the hazard keep contraction (cross_entropy's looped kernel has no product
    before its max; a persistent softmax computes x·s once)."""
    from dataclasses import replace

    from kerntailor.builder import cross_compile
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path = FUSED / "decode_scores.py"
    _, cap, gen, plan = prepared(path)
    (index, group), = [(i, g) for i, g in enumerate(plan.groups) if g.family == "reduction"]
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    schedules[group.name] = ReductionSchedule(XBLOCK=1, RBLOCK=512, num_warps=16, persistent=False)
    module = generate_module(load_problem(path), gen, plan, schedules, "test", "sm_90")
    kernel = module.kernels[index]
    assert ("enable_fp_fusion", False) in kernel.options and "enable_fp_fusion=False" in module.source
    source = kernel_source(module.source, kernel)
    target = get_target("h200")
    off = cross_compile(source, target, timeout_s=None, keep_asm=True, use_cache=False)
    on = cross_compile(replace(source, options=tuple((n, v) for n, v in source.options if n != "enable_fp_fusion")),
                       target, timeout_s=None, keep_asm=True, use_cache=False)
    assert off.ok and on.ok, (off.error, on.error)
    assert "fma.rn.f32" not in off.asm["ptx"]
    assert "fma.rn.f32" in on.asm["ptx"]
    schedules[group.name] = ReductionSchedule(XBLOCK=1, RBLOCK=4096, num_warps=16, persistent=True)
    persistent = generate_module(load_problem(path), gen, plan, schedules, "test", "sm_90")
    assert ("enable_fp_fusion", False) not in persistent.kernels[index].options
    looped = reduction_module(L1 / "cross_entropy.py", {"XBLOCK": 1, "RBLOCK": 1024, "persistent": False})
    assert "enable_fp_fusion" not in looped.source


SIBLINGS = '''"""The range of each row: max minus min, two reductions of one input (one kernel, one read)."""
import torch
import torch.nn as nn

rows = 96
cols = 1000


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=1) - torch.amin(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
'''


@pytest.mark.interpreter
@pytest.mark.parametrize("knobs", [None, {"XBLOCK": 2, "RBLOCK": 128, "persistent": False, "num_warps": 4}],
                         ids=["default", "looped"])
def test_sibling_reductions_of_one_input_share_a_kernel(knobs, tmp_path):
    path = tmp_path / "row_range.py"
    path.write_text(SIBLINGS)
    _, _, gen, plan = prepared(path)
    assert [g.family for g in plan.groups] == ["reduction"] and plan.groups[0].inputs == ("x",)
    module = reduction_module(path, knobs)
    assert module.kernels[0].source.count("tl.load(") == 1   # x read once (per chunk when looped)
    verify(path, module, tmp_path)


@pytest.mark.compile
def test_row_starts_are_hinted_aligned_so_loads_vectorize(tmp_path):
    """Rows of 3,060 fp32 (a multiple of 4, not of 16, so Triton's own specialization cannot tell): the kernel
    reads the row length as rlen = length // ALIGN * ALIGN, which the host makes the same value by setting ALIGN
    per call to the length's largest power-of-two divisor (at most 16). Cross-compiled for sm_90 at ALIGN 4 the
    loads are 128-bit; at ALIGN 1 (what an odd row gets) they are 32-bit, so ALIGN is what vectorizes them."""
    from dataclasses import replace

    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path = FUSED / "tiny_channel_bias_rows.py"
    module = make_module(path, arch="sm_90")
    (kernel,) = module.kernels
    assert "rlen = s1 // ALIGN * ALIGN" in kernel.source and "xindex * rlen + rindex" in kernel.source
    assert "rmask = rindex < rlen" in kernel.source
    assert ("ALIGN", 4) in kernel.launch.constexprs
    assert "ALIGN=(min(16, (d2) & -(d2)) or 1)" in module.source
    _, _, gen, _ = prepared(path)
    source = kernel_source(module.source, kernel, gen)   # 16-byte aligned pointers, as the launcher specializes
    unaligned = replace(source, constexprs=dict(source.constexprs, ALIGN=1))
    aligned, plain = build_many([source, unaligned], [get_target("h200")], cache_dir=tmp_path / "cache")
    assert aligned.ok and plain.ok, (aligned.error, plain.error)
    widths = dict(aligned.facts.global_load_widths)
    assert any(".v4" in w for w in widths), widths
    assert not any(".v4" in w for w in dict(plain.facts.global_load_widths)), plain.facts.global_load_widths


@pytest.mark.interpreter
def test_aligned_rows_pass_the_referee(tmp_path):
    """The same kernel at every variant (row lengths 3,060, 1,028 and the odd 1,031: ALIGN 4, 4 and 1)."""
    path = FUSED / "tiny_channel_bias_rows.py"
    verify(path, make_module(path), tmp_path)


def test_a_row_coordinate_dividing_by_the_row_length_follows_its_definition():
    """Causal attention's probabilities written out (causal_probs_masked: problems/level3/causal_attention_masked.py
    without its @ v, which is now one attention kernel): the softmax rows' mask row coordinate is `xindex % rlen`
    (the key length equals the query length); it must come after `rlen = ...` (it came before, and every draw
    raised UnboundLocalError in the interpreter: the ieee sweep of 2026-12-02)."""
    source = make_module(FUSED / "causal_probs_masked.py").source
    assert "xindex % rlen" in source
    for body in source.split("@triton.jit")[1:]:
        lines = body.splitlines()
        defined = next((i for i, ln in enumerate(lines) if ln.strip().startswith("rlen = ")), None)
        used = [i for i, ln in enumerate(lines) if "rlen" in ln and not ln.strip().startswith("rlen = ")]
        if used:
            assert defined is not None and defined < min(used), "\n".join(lines[:12])


_RUN_SUM = '''
import importlib.util, json, sys
import torch
spec = importlib.util.spec_from_file_location("k", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
model = mod.ModelNew()
x = torch.full((16, 513), 2.0 ** -24)
x[0, :16] = 1.0          # each of the 16 lanes starts at 1.0, then adds 512 terms of half its ulp (ties to even)
exact = x.double().sum().item()
y = x.clone(); y[3, 5] = float("inf")
z = y.clone(); z[7, 9] = float("-inf")
acc = torch.zeros(16)    # the lanes' plain fp32 running sums, in the kernel's order (RBLOCK 16)
for chunk in x.flatten().view(-1, 16):
    acc = acc + chunk
print(json.dumps({"got": model(x).item(), "exact": exact, "naive": acc.sum().item(),
                  "inf": model(y).item(), "nan": model(z).item()}))
'''


@pytest.mark.interpreter
def test_a_looped_sum_compensates_each_lane(tmp_path):
    """A looped fp32 sum adds R / RBLOCK terms a lane one after another; KernelBench's 37_FrobeniusNorm_ (459,000 a
    lane) erred 5.6e-5 on the H200, past the fp32 policy. Here each lane adds 512 terms of half the ulp of its
    running 1.0: a plain sum never moves (16.0, 3e-5 off, past the policy's 1e-5), the compensated one lands on
    the exact total; an inf term still gives inf, and inf with -inf NaN."""
    import json
    import os
    import subprocess
    import sys

    module = reduction_module(FUSED / "tiny_sum_all.py", {"XBLOCK": 1, "RBLOCK": 16, "SPLIT": 0,
                                                           "persistent": False, "num_warps": 1})
    assert "kahan_t" in module.kernels[0].source
    kernel = tmp_path / "kernel.py"
    kernel.write_text(module.source)
    out = subprocess.run([sys.executable, "-c", _RUN_SUM, str(kernel)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert abs(r["naive"] - r["exact"]) / r["exact"] > 2e-5        # the case is one a plain sum fails
    assert abs(r["got"] - r["exact"]) / r["exact"] < 1e-6, r
    assert r["inf"] == float("inf") and r["nan"] != r["nan"], r


@pytest.mark.unit
def test_only_a_sum_kept_in_fp32_pays_for_kahan():
    """Kahan's compensation costs four operations an element: a sum rounded to bf16 does without (its own rounding
    is far coarser than a plain fp32 lane's error), an fp32 sum keeps it."""
    knobs = {"XBLOCK": 1, "RBLOCK": 16, "SPLIT": 0, "persistent": False, "num_warps": 1}
    assert "kahan_t" in reduction_module(FUSED / "tiny_sum_all.py", knobs).kernels[0].source
    bf16 = reduction_module(FUSED / "tiny_sum_all.py", knobs, dtype="bf16").kernels[0].source
    assert "kahan_t" not in bf16 and "cmp_" not in bf16 and "tl.sum(" in bf16


@pytest.mark.unit
def test_expm1_takes_the_16_bit_form_only_where_every_output_is_16_bit():
    """libdevice's expm1 made bf16 ELU / SELU instruction-bound on the H200 (helpers/math.py): a kernel whose every
    output is bf16 or fp16 computes expm1 as exp(x) - 1 (a polynomial near 0), accurate far below their half-ulp;
    an fp32 kernel keeps libdevice's (the interpreter's portable form)."""
    bf16 = make_module(FUSED / "tiny_elu.py", dtype="bf16").source
    fp32 = make_module(FUSED / "tiny_elu.py").source
    assert "_expm1_16(" in bf16 and "libdevice.expm1" not in bf16 and "_expm1(" not in bf16
    assert "_expm1(" in fp32 and "libdevice.expm1" in fp32 and "_expm1_16" not in fp32


@pytest.mark.interpreter
def test_an_expression_nested_past_the_parsers_limit_is_bound_in_parts(tmp_path):
    """A concatenation of 70 pieces renders as 70 nested tl.where: past NEST_LIMIT (render.py) the writer binds the
    deep part to a variable, so no statement nests deeper than the limit (34_VanillaRNNHidden's 256 pieces made a
    kernel.py Python could not parse) and the module still computes the concatenation (referee, interpreter)."""
    import ast

    from kerntailor.codegen.render import NEST_LIMIT, nesting

    problem = FUSED / "cat_seventy.py"
    module = make_module(problem)
    ast.parse(module.source)
    assert re.search(r"^\s*nest\d+ = tl\.where\(", module.source, re.M), "a deep part bound to a variable"
    assert max(nesting(line) for line in module.source.splitlines()) <= NEST_LIMIT + 8
    verify(problem, module, tmp_path)


def test_the_strided_default_and_its_seeds():
    """A mean over the middle axis (rows contiguous): the default is 64 rows x 64 on 8 warps (measured best for
    max and sum on the H200, families.strided_seeds), seeded first, then the tiles with every warp across the rows
    (argmin's best); all lie in the strided group's space. BatchNorm's statistics over (N, H, W), contiguous along a
    reduced axis, are no strided group."""
    from kerntailor.codegen.fused import reduction_work_sizes
    from kerntailor.search.families import make_space, seed_knobs
    from kerntailor.targets import get_target

    _, _, gen, plan = prepared(ROOT / "problems" / "level1" / "mean_middle_axis.py")
    group = next(g for g in plan.groups if g.family == "reduction")
    schedule = default_schedule(gen, group)
    assert (schedule.XBLOCK, schedule.RBLOCK, schedule.num_warps) == (64, 64, 8), schedule
    sizes = reduction_work_sizes(gen, group)
    assert sizes.get("strided") == 1
    for target in ("h200", "mi300x"):
        space = make_space("reduction", get_target(target), dtype="bf16", **sizes)
        assert not space.violations(space.config_of(schedule)), target
        seeds = seed_knobs("reduction", get_target(target), dtype="bf16", **sizes)
        assert (seeds[0]["XBLOCK"], seeds[0]["num_warps"]) == (64, 8), seeds[0]
        warp = get_target(target).warp_size
        assert [(s["XBLOCK"], s["num_warps"]) for s in seeds[1:3]] == [(min(warp * 8, 1024), 8), (warp * 4, 4)]
        assert not any(space.violations(space.config_of(schedule.retune(s))) for s in seeds), target
    bn = prepared(FUSED / "tiny_batchnorm3d_train.py")
    assert "strided" not in reduction_work_sizes(bn[2], bn[3].groups[0])


RMSNORM_3D = '''"""RMSNorm of a 3-d x before a projection: the export flattens the row statistics to (B*T, 1)."""
import torch
import torch.nn as nn

batch = 2
seq = 24
hidden = 160


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * self.weight)


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden]
'''


@pytest.mark.interpreter
def test_row_statistics_reshaped_to_the_rows_stay_in_the_norms_kernel(tmp_path):
    """Llama's RMSNorm over (B, T, H) before a Linear: the mean is (B, T) and its epilogue (B*T, 1). Those are
    the row values in row order, so the norm is one kernel (it was refused as 'a view that is not a narrowing'
    and split into a kernel per op: 7 kernels in place of 1 in the decoder block, measured on the H200)."""
    path = tmp_path / "rmsnorm_3d.py"
    path.write_text(RMSNORM_3D)
    _, _, gen, plan = prepared(path, "bf16")
    assert [g.family for g in plan.groups] == ["reduction", "matmul"]
    module = make_module(path, dtype="bf16")
    assert len(module.kernels) == 2
    verify(path, module, tmp_path, dtype="bf16")


@pytest.mark.interpreter
def test_a_persistent_kernel_of_several_rows_takes_fewer_where_rows_are_longer_than_traced(tmp_path):
    """Persistent rows several a program (softmax over rows of 128, 8 rows a program) keep the traced tile's element
    count at any row length: rows longer than traced take fewer rows a program (one at least), so no call compiles
    or holds a larger block than the schedule that was searched and built (level-2 62's GroupNorm, 64 rows of 16
    traced, ran past the referee's 120-s GPU allowance at rows of 2050: a 64 x 4096 block). The outputs are the same
    at every row length; the grid covers every row."""
    import triton

    module = make_module(L1 / "softmax_short_rows.py")
    launch = next(line for line in module.source.splitlines() if "k0_reduction_kernel[" in line)
    rows_a_program = re.search(r"XBLOCK=(max\(1, min\(8, 1024 // triton\.next_power_of_2\(d1\)\)\))", launch)
    assert rows_a_program, launch
    at = {d1: eval(rows_a_program.group(1), {"triton": triton, "d1": d1}) for d1 in (128, 100, 300, 1000, 5000)}
    assert at == {128: 8, 100: 8, 300: 2, 1000: 1, 5000: 1}, at   # traced: as searched; longer: the tile kept
    path = tmp_path / "kernel.py"
    path.write_text(module.source)
    check = tmp_path / "check.py"   # a fresh process: TRITON_INTERPRET is read where kernels are decorated
    check.write_text(textwrap.dedent("""
        import importlib.util, sys
        import torch
        spec = importlib.util.spec_from_file_location("kt_persistent_rows", sys.argv[1])
        kernel = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kernel)
        new = kernel.ModelNew()
        for shape in ((5, 1000), (9, 300), (17, 128), (3, 5000)):
            x = torch.randn(*shape)
            assert torch.allclose(new(x), torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6), shape
        print("ok")
    """))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(check), str(path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("name, stats", [("tiny_batchnorm_tanh_maxpool", 2), ("tiny_layernorm_avgpool3d", 2),
                                         ("tiny_groupnorm_scale_maxpool", 2)])
def test_a_norms_normalising_tail_is_its_pools_prologue(name, stats):
    """BatchNorm + tanh before a max pool, LayerNorm before an average pool, GroupNorm (its tail partly at the group
    shape (N, G, C/G.H.W)) + a scale before a max pool: the norm's group keeps its statistics and writes them (mean,
    reciprocal deviation), and the pool computes `(x - mean) * rstd * weight + bias` on each window element it loads,
    so the normalised tensor is never written (KernelBench level-2 11, 3, 72 and 85; planned bytes of 3: 4.50 -> 3.49
    GB)."""
    _, _, gen, plan = prepared(FUSED / f"{name}.py")
    norm, pool = plan.groups
    assert (norm.family, pool.family) == ("reduction", "pool") and pool.prologue and len(norm.outputs) == stats
    x = next(i.name for i in gen.graph.inputs if i.kind == "input")
    assert x in pool.inputs and set(norm.outputs) <= set(pool.inputs)   # the norm's input and its statistics
    full = gen.graph.node(pool.anchor).operands[0].numel
    assert all(gen.graph.node(o).out.numel < full for o in norm.outputs)   # never the normalised tensor


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ["tiny_batchnorm_tanh_maxpool", "tiny_layernorm_avgpool3d",
                                  "tiny_groupnorm_scale_maxpool"])
def test_a_pool_with_a_norms_tail_as_its_prologue_passes_the_referee(name, tmp_path):
    path = FUSED / f"{name}.py"
    module = make_module(path)
    assert "(prologue)" in module.source
    verify(path, module, tmp_path)


def test_regrouped_names_how_a_prologue_member_lies_over_the_pool_input():
    """plan/fusion.py's `regrouped`, which decides which norm tails a pool computes: the pool input's shape (size-1
    axes aside), axes of its own over N.C then the spatial axes, or a last axis spanning whole planes (GroupNorm's
    (N, G, C/G.H.W)); nothing else."""
    assert regrouped((2, 8, 6, 10), (2, 8, 6, 10)) == "same"
    assert regrouped((2, 8, 1, 10), (2, 8, 10)) == "same"
    assert regrouped((2, 8, 6, 10), (16, 6, 10)) == "spatial"
    assert regrouped((2, 8, 6, 10), (2, 4, 120)) == "merged"
    assert regrouped((2, 8, 6, 10), (2, 8, 60)) == "merged"
    assert regrouped((2, 8, 6, 10), (2, 8, 3, 20)) is None     # splits a plane otherwise
    assert regrouped((2, 8, 6, 10), (2, 8, 6, 5)) is None      # other elements
    assert regrouped((2, 8, 6, 10), (2, 4, 2, 60)) == "merged"


def test_a_groupnorm_tail_in_a_pool_divides_once_an_output_not_once_a_window_element():
    """The GroupNorm members' coordinates (n, g, r) of each window element: g from the row n.C + c, above the window
    loop; r = (c mod C/G) x H.W + the window's position in the plane. The loop body has no integer division."""
    source = make_module(FUSED / "tiny_groupnorm_scale_maxpool.py").source
    kernel = source[source.index("_pool_kernel("):]
    body = kernel[kernel.index("for k0 in"):kernel.index("v_maxpool0 =")]
    assert "(prologue)" in body and "//" not in body and "%" not in body, body
    above = kernel[:kernel.index("for k0 in")]
    assert re.search(r"rg\d+ = i0 \* \w+ \+ i1", above), above   # the row n.C + c, once


@pytest.mark.parametrize("name", ["tiny_groupnorm_mean", "tiny_groupnorm_logsumexp"])
def test_a_norms_normalising_tail_moves_to_the_reduction_that_reads_it(name):
    """GroupNorm before a mean over (C, H, W) or a logsumexp over C: the normalising tail (and the pointwise work
    after it) leaves the norm's group for the reduction's, which computes it where it loads; the norm's group writes
    its two statistics, never the normalised tensor (KernelBench level-2 23, 27, 79 and 92; planned bytes of 92:
    2.16 -> 1.64 GB)."""
    _, _, gen, plan = prepared(FUSED / f"{name}.py")
    norm, reader = plan.groups
    assert (norm.family, reader.family) == ("reduction", "reduction") and len(norm.outputs) == 2
    full = gen.graph.node(next(n for n in reader.nodes if gen.graph.node(n).family == "reduction")).operands[0].numel
    assert all(gen.graph.node(o).out.numel < full for o in norm.outputs)
    affine = [n for n in reader.nodes
              if gen.graph.node(n).family == "pointwise" and gen.graph.node(n).out.numel == full]
    assert len(affine) >= 4 and set(norm.outputs) <= set(reader.inputs)   # (x - mean) * rstd * weight + bias


def test_a_full_size_member_the_statistics_read_too_is_computed_again_by_the_tails_reader():
    """`x * a + b` before a GroupNorm, then a mean: the norm's statistics read the affine, and so does its
    normalising tail. The tail still moves to the mean's group, which computes the affine again from x, a and b
    (`recomputed`); the norm's group keeps it for its statistics; neither writes it (as after a library
    convolution, whose bias add is such a member: KernelBench level-2 23, 85, 92, whose GroupNorm tails stayed in
    the norm's group, writing the normalised tensor, whenever the convolution was the library's)."""
    _, _, gen, plan = prepared(FUSED / "tiny_affine_groupnorm_mean.py")
    norm, reader = plan.groups
    affine = tuple(n.name for n in gen.graph.nodes[:2])
    assert reader.recomputed == affine and set(affine) <= set(norm.nodes) & set(reader.nodes)
    assert {"x", "p_a", "p_b"} <= set(reader.inputs) and set(norm.outputs) <= set(reader.inputs)
    full = gen.graph.node(affine[0]).out.numel
    assert [o for g in plan.groups for o in g.outputs if gen.graph.node(o).out.numel >= full] == []
    assert plan.group_of(affine[0]) is norm   # the owner, not the group that recomputes it


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ["tiny_groupnorm_mean", "tiny_groupnorm_logsumexp", "tiny_affine_groupnorm_mean"])
def test_a_reduction_with_a_norms_tail_in_its_loads_passes_the_referee(name, tmp_path):
    path = FUSED / f"{name}.py"
    verify(path, make_module(path), tmp_path)


@pytest.mark.compile
@pytest.mark.parametrize("name, knobs", [
    ("tiny_groupnorm_scale_maxpool", None), ("tiny_groupnorm_logsumexp", None), ("tiny_groupnorm_mean", None),
    # a pass over the channels as scalars (the row's planes chunked): the affine's per-channel loads then move with
    # scalars only and must still be row-shaped blocks, as their mask is (23_Conv3d_GroupNorm_Mean's k2 did not
    # compile: "Mask argument cannot be block type if pointer argument is not a block")
    ("tiny_groupnorm_mean", {"reduction": {"persistent": False, "RBLOCK": 32, "XBLOCK": 1}})])
def test_a_norms_tail_in_its_readers_loads_cross_compiles(name, knobs, tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    module = make_module(FUSED / f"{name}.py", knobs)
    if knobs is not None:
        assert "loads index separately: scalars" in module.source
    sources = [kernel_source(module.source, kernel) for kernel in module.kernels]
    results = build_many(sources, [get_target("mi300x"), get_target("h100")], cache_dir=tmp_path / "build-cache")
    assert len(results) == 2 * len(sources)
    for r in results:
        assert r.ok, f"{name} on {r.target}: {r.error}"
        assert r.facts is not None and not r.facts.spills, (name, r.target, r.facts)
