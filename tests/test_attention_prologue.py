"""An attention operand's pointwise prologue (plan/fusion.py's operand_prologues, codegen/attention_prologue.py):
rotary embedding on q and k is computed where the attention kernel loads q (once per program) and k (on every key
block), never written. Unit tests check the plan (the RoPE groups join the attention's, the planned bytes fall;
refused where the rotated k is read elsewhere or the recompute limit is passed) and the kernel's text; the
interpreter tier runs the referee's protocol in fp32 and bf16; the cross-compile is a case of
the compile tier here (sm_90 and gfx942, the default schedule)."""

from __future__ import annotations

import pytest

from helpers import DATA, make_module, prepared, verify
from kerntailor.codegen import FAMILIES, CodegenUnsupported
from kerntailor.plan import fusion, plan_fusion

ROPE = DATA / "attention" / "rope_sdpa.py"


def _attention(plan):
    (group,) = [g for g in plan.groups if g.family == "attention"]
    return group


def test_rope_on_q_and_k_is_the_attentions_prologue_and_is_never_written(monkeypatch):
    _, _, gen, plan = prepared(ROPE)
    # q, k and v projections: one horizontal GEMM kernel (plan/horizontal.py), then the attention, the output projection
    assert [g.family for g in plan.groups] == ["matmul", "attention", "matmul"]
    group = _attention(plan)
    rotated = {j: names for j, names in group.operand_prologues}
    att = gen.graph.node(group.anchor)
    assert sorted(rotated) == [0, 1] and att.name == "attn0"
    for j in (0, 1):   # each operand's prologue ends in the buffer the attention reads, all of them members
        assert rotated[j][-1] == att.operands[j].base and set(rotated[j]) <= set(group.prologue)
    assert set(group.prologue) == {n.name for n in gen.graph.nodes if n.family == "pointwise"} - {"copy0"}
    assert {i for i in group.inputs} == {"mm0", "mm1", "mm2", "b_cos", "b_sin"}
    monkeypatch.setattr(fusion, "PROLOGUE_OPERANDS", ())   # the plan before: two RoPE kernels writing q and k
    before = plan_fusion(gen.graph, FAMILIES)
    assert len(before.groups) == len(plan.groups) + 2
    # the rotated q and k (B x H x T x D fp32 each) are neither written nor read back
    q_bytes = att.operands[0].numel * 4
    assert before.bytes_moved - plan.bytes_moved >= 3 * q_bytes


def test_a_rotated_k_read_elsewhere_stays_a_kernel_of_its_own(tmp_path):
    shared = tmp_path / "rope_k_read_elsewhere.py"
    shared.write_text(ROPE.read_text().replace("is_causal=True)\n", "is_causal=True) + k.amax(-1, keepdim=True)\n"))
    _, _, gen, plan = prepared(shared)
    group = _attention(plan)
    att = gen.graph.node(group.anchor)
    rotated_k = att.operands[1].base
    assert [j for j, _ in group.operand_prologues] == [0]   # q still computed, k written by a kernel of its own
    assert rotated_k in group.inputs and any(rotated_k in g.outputs for g in plan.groups)
    # the rule itself: the chain that computes k, read by the mean too, is no prologue of the attention
    consumers, outputs = gen.graph.consumers(), {v.base for v in gen.graph.outputs}
    chain = [n for n in gen.graph.nodes if n.name in dict(_attention(prepared(ROPE)[3]).operand_prologues)[1]]
    assert chain[-1].name == rotated_k
    assert not fusion._attention_prologue(fusion._Group("pointwise", chain, chain[-1].out.shape), att, 1, consumers,
                                          outputs)


def test_the_recompute_limit_refuses_a_prologue_that_loads_too_much(monkeypatch):
    _, _, gen, _ = prepared(ROPE)
    monkeypatch.setattr(fusion, "PROLOGUE_LOADS", 4)   # RoPE loads 5 values per element it computes
    plan = plan_fusion(gen.graph, FAMILIES)
    assert not _attention(plan).operand_prologues and not _attention(plan).prologue


def test_the_kernel_computes_q_once_and_k_per_key_block():
    module = make_module(ROPE, {"attention": {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}})
    plan = prepared(ROPE)[3]
    group = _attention(plan)
    kernel = next(k for k in module.kernels if k.kernel_name.endswith("attention_kernel"))
    args = [b for _, b in kernel.pointer_args]
    rotated = [dict(group.operand_prologues)[j][-1] for j in (0, 1)]
    assert not set(rotated) & set(args) and {"mm0", "mm1", "b_cos", "b_sin"} <= set(args)
    source = module.source
    body = source[source.index(f"def {kernel.kernel_name}("):]
    loop = body.index("for start in range(0, lo, BLOCK_N)")
    q_at = body.index("q = tl.where(")
    assert q_at < loop and body.count("q = tl.where(") == 1   # q: once, before the key loop
    # k: in every loop that walks key blocks (the whole blocks, the chunked ones, the masked diagonal)
    assert body.count("kt = tl.where(") == body.count("for start in range(")
    assert "kt_off" not in body and "tl.trans(k_desc" not in body


def test_tma_refuses_a_computed_k_by_name():
    with pytest.raises(CodegenUnsupported, match="TMA"):
        make_module(ROPE, {"attention": {"TMA": 1}}, "bf16", "sm_90")


# --- interpreter: the referee's protocol ---------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("dtype, knobs", [(None, {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}), ("bf16", {})],
                         ids=["fp32_small_tiles", "bf16_default"])
def test_rope_attention_passes_the_referee(dtype, knobs, tmp_path):
    """fp32 at 16 x 16 tiles (several key blocks: the whole-block loop and the masked diagonal both compute k),
    bf16 at the default schedule; the head dim varies between variants (D_FULL, the halves' shift D/2 a size
    argument)."""
    verify(ROPE, make_module(ROPE, {"attention": knobs}, dtype), tmp_path, dtype)


@pytest.mark.interpreter
@pytest.mark.slow
def test_rope_with_one_kv_head_passes_the_referee(tmp_path):
    """MQA (enable_gqa, one K/V head): k's prologue computed at head i // (Hq / Hkv) of its own projection."""
    mqa = tmp_path / "rope_mqa.py"
    mqa.write_text(ROPE.read_text()
                   .replace("self.k_proj = nn.Linear(hidden, hidden", "self.k_proj = nn.Linear(hidden, hidden // heads")
                   .replace("self.v_proj = nn.Linear(hidden, hidden", "self.v_proj = nn.Linear(hidden, hidden // heads")
                   .replace("k_proj(x).view(b, t, self.heads,", "k_proj(x).view(b, t, 1,")
                   .replace("v_proj(x).view(b, t, self.heads,", "v_proj(x).view(b, t, 1,")
                   .replace("is_causal=True)", "is_causal=True, enable_gqa=True)"))
    _, _, gen, plan = prepared(mqa)
    group = _attention(plan)
    att = gen.graph.node(group.anchor)
    assert sorted(j for j, _ in group.operand_prologues) == [0, 1] and att.operands[1].shape[1] == 1
    verify(mqa, make_module(mqa, {"attention": {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}}), tmp_path)


# --- compile: cross-compiled for sm_90 and gfx942 (no GPU) ---------------------------------------------------

@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("name, arch", [("h200", "sm_90"), ("mi300x", "gfx942")])
def test_the_prologue_kernel_cross_compiles_with_matrix_instructions(name, arch, tmp_path):
    """bf16 at the default schedule (128 x 32 with a computed k, D = 128): within the target's limits, on its matrix
    units; no spills on sm_90. gfx942 spills 9 (triton 3.6, 2026-12-04; 27 at 128 x 64): the bound below guards it."""
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    module = make_module(ROPE, dtype="bf16", arch=arch)
    kernel = next(k for k in module.kernels if k.kernel_name.endswith("attention_kernel"))
    with BuildPool(None, timeout_s=600) as pool:
        (r,) = pool.build([kernel_source(module.source, kernel, prepared(ROPE, "bf16")[2])], [get_target(name)],
                          cache=BuildCache(tmp_path))
    assert r.ok and not r.rejected_reason, r.error or r.rejected_reason
    assert r.facts.matrix_instr_count > 0 and any("bf16" in k for k in r.facts.matrix_instr_kinds)
    assert r.facts.spills == 0 if arch == "sm_90" else r.facts.spills <= 9, r.facts
