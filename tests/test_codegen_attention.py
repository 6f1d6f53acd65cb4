"""The attention family (codegen/attention.py): SDPA captured as an Attention anchor is planned as an attention
group and generated as a flash-attention kernel whose values match torch's SDPA under the Triton interpreter
(causal and not, GQA, boolean and additive masks, odd lengths, head dims 16-128 and 80, decode with Lq = 1, bf16),
special values included, and whose modules pass the referee. Unit tests check the schedule, the space and what
the writer refuses; the cross-compile of the default schedules is in the compile tier.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import DATA, L1, L3, make_module, prepared, verify
from kerntailor.codegen import FAMILIES, ScheduleError, default_schedule
from kerntailor.codegen.attention import AttentionSchedule
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.plan import plan_fusion
from kerntailor.search.families import loop_trips, make_space, program_count, seed_knobs
from kerntailor.targets import get_target

ATT = DATA / "attention"
PLAIN, CAUSAL, GQA = ATT / "sdpa_plain.py", ATT / "sdpa_causal.py", ATT / "sdpa_gqa.py"
BOOL_MASK, ADD_MASK = ATT / "sdpa_bool_mask.py", ATT / "sdpa_additive_mask.py"
KEY_PADDING = ATT / "sdpa_key_padding.py"   # a boolean (B, 1, 1, Lk) mask: broadcast over heads and queries
CROSS, CROSS_CAUSAL = ATT / "sdpa_cross.py", ATT / "sdpa_cross_causal.py"
# attention written out (capture/rewrite_attention.py): MinGPT's tril buffer, a keep-mask input, an additive bias
MINGPT, WHERE_KEEP, WRITTEN_ADD = ATT / "written_mingpt.py", ATT / "written_where_keep.py", ATT / "written_additive.py"
GPT_BLOCK = ATT / "written_gpt_block.py"
WRITTEN_RELU = ATT / "written_relu.py"
# the attention's output only copied to other layouts: stored at the copies' strides (plan/fusion.py's layout_store)
HEADS_MERGED, HEADS_TRANSPOSED = ATT / "heads_merged.py", ATT / "heads_transposed.py"


# --- unit ----------------------------------------------------------------------------------------------------

def test_sdpa_is_planned_as_an_attention_group_and_the_library_remains_the_fallback():
    _, _, gen, plan = prepared(PLAIN)
    (group,) = plan.groups
    assert group.family == "attention"
    module = make_module(PLAIN)
    assert "tl.dot(q, kt" in module.source and "scaled_dot_product_attention.default(" not in module.source
    # codegen refusing it (the pipeline's re-plan): the library call, as before
    library = plan_fusion(gen.graph, FAMILIES, library=[group.anchor])
    assert [g.family for g in library.groups] == ["library"]


def test_gqa_written_with_repeat_interleave_reads_the_shared_heads_without_copies():
    """gqa_causal_attention repeats k and v with repeat_interleave: capture reads the un-repeated tensors."""
    _, _, gen, plan = prepared(L3 / "gqa_causal_attention.py")
    assert [g.family for g in plan.groups] == ["attention"]
    (att,) = gen.graph.nodes
    assert att.operands[0].shape[1] == 4 * att.operands[1].shape[1] == 4 * att.operands[2].shape[1]
    assert {op.base for op in att.operands} == {i.name for i in gen.graph.inputs}
    source = make_module(L3 / "gqa_causal_attention.py").source
    assert "k_base = " in source and " // " in source.split("k_base = ")[1].splitlines()[0]


@pytest.mark.parametrize("path", [MINGPT, WHERE_KEEP, WRITTEN_ADD, L3 / "causal_attention_masked.py",
                                  L3 / "decode_attention.py"], ids=lambda p: p.stem)
def test_written_out_attention_is_planned_as_one_attention_group(path):
    """No matrix product and no softmax group left: the scores are never written; the mask (a tril buffer's
    `== 0`, an iota comparison) is at most a small pointwise group before it."""
    _, _, gen, plan = prepared(path)
    assert [g.family for g in plan.groups if g.family != "pointwise"] == ["attention"]
    source = make_module(path).source
    assert "tl.dot(q, kt" in source and "o = acc / l_i[:, None]" in source
    assert "scaled_dot_product_attention" not in source and "_safe_softmax" not in source


def test_written_out_heads_are_views_of_the_projection():
    """MinGPT's block: q, k, v split from one projection and transposed to (B, H, T, hd); torch.matmul's copies of
    them die, the attention reads the projection's output through strides."""
    _, _, gen, plan = prepared(GPT_BLOCK)
    (att,) = [n for n in gen.graph.nodes if n.family == "attention"]
    assert len({op.base for op in att.operands[:3]}) == 1 and not att.operands[0].base.startswith("copy")
    assert not any(n.name.startswith("copy") for n in gen.graph.upstream([att.name], {m.name for m in gen.graph.nodes})
                   if n is not att)
    assert [op.offset for op in att.operands[:3]] == [0, 64, 128]
    assert [g.family for g in plan.groups if g.family in ("attention", "matmul")] == ["matmul", "attention", "matmul"]


@pytest.mark.parametrize("path", [GPT_BLOCK, WRITTEN_RELU, HEADS_MERGED], ids=lambda p: p.stem)
def test_copies_of_the_output_to_other_head_layouts_are_stored_by_the_attention(path):
    """A GPT block's `y.transpose(1, 2).contiguous().view(B, T, C)` (and a time-major permute): the copies join the
    attention group, which stores O at their strides; the (B, H, T, D) buffer is never written, no copy kernel is
    left, and the plan moves O's write and each copy's read of it fewer bytes."""
    _, _, gen, plan = prepared(path)
    (group,) = [g for g in plan.groups if g.family == "attention"]
    copies = [n.name for n in gen.graph.nodes if n.name.startswith("copy")]
    assert copies and group.nodes == (group.anchor, *copies) and group.outputs == tuple(copies)
    assert not any(g.family == "pointwise" and set(g.nodes) & set(copies) for g in plan.groups)
    apart = plan_fusion(gen.graph, FAMILIES, cuts=copies)   # each copy a kernel of its own, as before
    o_bytes = gen.graph.node(group.anchor).out.nbytes
    assert apart.bytes_moved - plan.bytes_moved == (1 + len(copies)) * o_bytes   # O's write, each copy's read
    source = make_module(path).source
    assert f"tl.store({group.anchor}_ptr" not in source
    assert all(source.count(f"tl.store({c}_ptr") == 1 for c in copies)


def test_heads_merged_stores_at_the_permuted_strides():
    """(B, H, T, D) -> (B, T, H, D) and (T, B, H, D): the tile of O at (i0, i1, om, od) lands at the copies' own
    row-major offsets (the head dim stays the unit stride), from the same register tile."""
    source = make_module(HEADS_MERGED).source
    assert "copy0 = torch.empty((d0, d2, d1, d3)" in source and "copy1 = torch.empty((d2, d0, d1, d3)" in source
    params = re.search(r"def k0_attention_kernel\((.*?)\):", source).group(1).split(", ")
    args = re.search(r"k0_attention_kernel\[.*?\]\((.*?), BLOCK_M=", source).group(1).split(", ")
    host = dict(zip(params, args))   # the kernel's size arguments as the host computes them: (d0, d1, d2, d3) =
    stores = [re.sub(r"\bs\d+\b", lambda m: f"({host[m.group(0)]})", line.strip())   # (B, H, T, D)
              for line in source.splitlines() if "tl.store(copy" in line]
    assert stores == [
        "tl.store(copy0_ptr + (i0 * (d1 * d2 * d3) + i1 * (d3) + om * (d1 * d3) + od), v_attn0, mask=mmask & dmask)",
        "tl.store(copy1_ptr + (i0 * (d1 * d3) + i1 * (d3) + om * (d0 * d1 * d3) + od), v_attn0, mask=mmask & dmask)",
    ], stores


def test_a_copy_that_moves_the_head_dim_stays_a_kernel_of_its_own():
    """Moving the head dim would make every store strided: that copy stays a pointwise group reading O, which the
    attention then writes as it is, beside its layout store of the other copy."""
    _, _, gen, plan = prepared(HEADS_TRANSPOSED)
    assert [(g.family, g.nodes, g.outputs) for g in plan.groups] == [
        ("attention", ("attn0", "copy0"), ("attn0", "copy0")), ("pointwise", ("copy1",), ("copy1",))]


def test_layout_permutation_takes_whole_permutes_only():
    from kerntailor.ir.types import View
    from kerntailor.plan.fusion import layout_permutation

    o = View.of("o", (2, 3, 5, 8))                                   # (B, H, T, D)
    assert layout_permutation(o.permute((0, 2, 1, 3)), (2, 3, 5, 8)) == (0, 2, 1, 3)
    assert layout_permutation(o.permute((2, 0, 1, 3)), (2, 3, 5, 8)) == (2, 0, 1, 3)
    assert layout_permutation(o, (2, 3, 5, 8)) == (0, 1, 2, 3)
    ones = View.of("o", (1, 3, 1, 8))                                # size-1 axes pair in order
    assert layout_permutation(ones.permute((0, 2, 1, 3)), (1, 3, 1, 8)) == (0, 2, 1, 3)
    for other in (o.slice(2, 1, 5, 1), o.flip((2,)), o.expand((2, 3, 5, 8)).unsqueeze(0),
                  View("o", (2, 5, 3, 8), (120, 8, 40, 1), 8)):      # a slice, a flip, a rank change, an offset
        assert layout_permutation(other, (2, 3, 5, 8)) is None


def test_a_layout_store_copies_a_held_member_as_it_is():
    """layout_store: a plain copy (no cast) of a member at the group's shape that is itself held (the anchor or an
    epilogue node), through a permutation that keeps the head dim last. With H == T a copy of a copy has the group's
    shape, but its source is stored, never held: refused."""
    from kerntailor.ir.expr import CAST, Load, Op
    from kerntailor.ir.nodes import Pointwise
    from kerntailor.ir.types import TensorType, View
    from kerntailor.plan.fusion import layout_store

    space = (2, 4, 4, 8)                                              # (B, H, T, D), H == T
    o = Pointwise("o", (), TensorType(space, "bf16"), "anchor stand-in", Load(0, "bf16"))

    def copy(name, source, dims, expr=None, dtype="bf16"):
        view = View.of(source.name, space).permute(dims)
        return Pointwise(name, (view,), TensorType(view.shape, dtype), "copy", expr or Load(0, "bf16"))

    heads = copy("heads", o, (0, 2, 1, 3))
    members = {"o": o, "heads": heads}
    assert layout_store(heads, members, space) == (0, 2, 1, 3)
    assert layout_store(copy("again", heads, (0, 2, 1, 3)), members, space) is None      # reads a stored copy
    assert layout_store(copy("d_moved", o, (0, 1, 3, 2)), members, (2, 4, 4, 8)) is None  # moves the head dim
    assert layout_store(copy("same", o, (0, 1, 2, 3)), members, space) is None          # no permutation
    cast = copy("cast", o, (0, 2, 1, 3), Op(CAST, (Load(0, "bf16"),), "fp32"), "fp32")
    assert layout_store(cast, members, space) is None                                   # not as it is


def test_schedule_checks_its_knobs():
    assert AttentionSchedule(BLOCK_M=128, BLOCK_N=64, num_warps=8).knobs()["BLOCK_N"] == 64
    for bad in ({"BLOCK_M": 8, "BLOCK_N": 64}, {"BLOCK_M": 96, "BLOCK_N": 64},
                {"BLOCK_M": 64, "BLOCK_N": 64, "precision": "fp8-row"}):
        with pytest.raises(ScheduleError):
            AttentionSchedule(**bad)


def test_default_schedule_by_dtype_and_length():
    _, _, gen, plan = prepared(L1 / "sdpa.py", "bf16")
    s = default_schedule(gen, plan.groups[0])
    assert (s.BLOCK_M, s.BLOCK_N, s.num_warps) == (128, 64, 8)
    _, _, gen, plan = prepared(L1 / "sdpa.py")
    s = default_schedule(gen, plan.groups[0])
    assert (s.BLOCK_M, s.BLOCK_N, s.num_warps) == (16, 64, 4) and s.precision == "ieee"   # fp32: measured best
    _, _, gen, plan = prepared(PLAIN)   # 40 keys: tiles no longer than the sequence warrants
    s = default_schedule(gen, plan.groups[0])
    assert s.BLOCK_M == 16 and s.BLOCK_N == 64


def test_space_seeds_and_what_a_config_implies():
    h200, mi300x = get_target("h200"), get_target("mi300x")
    sizes = {"BH": 256, "Lq": 2048, "Lk": 2048, "D": 128, "Dv": 128}
    space = make_space("attention", h200, dtype="bf16", **sizes)
    seeds = seed_knobs("attention", h200, dtype="bf16", **sizes)
    assert seeds and all(space.is_valid(space.config(**s)) for s in seeds)
    fp32_seeds = seed_knobs("attention", h200, dtype="fp32", **sizes)   # small query tiles for the FMA dot
    fp32_space = make_space("attention", h200, dtype="fp32", **sizes)
    assert fp32_seeds[0]["BLOCK_M"] == 16 and all(fp32_space.is_valid(fp32_space.config(**s)) for s in fp32_seeds)
    # the LDS rule keeps 4 stages of 128-key K and V tiles of fp32 out (4 x 128 x 256 x 4 B > 227 KiB)
    fp32 = make_space("attention", h200, dtype="fp32", **sizes)
    assert not fp32.is_valid(fp32.config(BLOCK_M=64, BLOCK_N=128, num_warps=8, num_stages=4, TMA=0))
    amd = make_space("attention", mi300x, dtype="bf16", **sizes)
    assert {k.name for k in amd.knobs} >= {"waves_per_eu", "matrix_instr_nonkdim"}
    assert "TMA" in space.names and "TMA" not in amd.names
    assert all(amd.is_valid(amd.config(**s)) for s in seed_knobs("attention", mi300x, dtype="bf16", **sizes))
    config = space.config(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3, TMA=1)   # TMA: Hopper's only
    assert program_count(config, sizes) == 16 * 256 and loop_trips(config, sizes) == 32
    # Hopper: the Q tile and a bf16 bias tile (num_stages - 1 buffers) share the 227 KiB (sm_90 cross-compiled:
    # 229,376 B without the bias at 128 x 128 / 3 stages, 294,912 B with it): the seeds keep fewer stages there
    biased = make_space("attention", h200, dtype="bf16", **sizes, MASK=2)
    assert space.is_valid(space.config(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=3, TMA=0))
    assert not biased.is_valid(biased.config(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=3, TMA=0))
    biased_seeds = seed_knobs("attention", h200, dtype="bf16", **sizes, MASK=2)
    assert biased_seeds[0]["num_stages"] == 2 and all(biased.is_valid(biased.config(**s)) for s in biased_seeds)


def test_head_dims_that_vary_take_their_block_per_call():
    source = make_module(PLAIN).source
    assert "BLOCK_D=max(16, triton.next_power_of_2(" in source
    assert "rd[None, :] < " in source   # padded head dims are masked
    # ... and the loop's loads only where the host says the head dims do not fill their blocks (D_FULL = 0)
    assert "D_FULL=int(" in source and "if D_FULL:" in source


def test_the_step_is_the_tutorials_without_a_mask_operand():
    """Triton's fused-attention tutorial's step: the row max of the unscaled scores times qk_scale, one FMA per
    score, hoisted key offsets; with a mask operand (added to the scaled scores) the scores are scaled first."""
    plain, additive = make_module(PLAIN).source, make_module(ADD_MASK).source
    assert "tl.max(qk, 1) * qk_scale" in plain and "p = tl.math.exp2(qk * qk_scale - m_use[:, None])" in plain
    assert "+ kt_off" in plain and "+ v_off" in plain
    assert "tl.max(qk, 1) * qk_scale" not in additive and "p = tl.math.exp2(qk - m_use[:, None])" in additive
    causal = make_module(CAUSAL).source
    assert "pid_m = num_m - 1 - pid % num_m" in causal and "pid_m = pid % num_m" in plain


def test_a_mask_broadcast_along_the_queries_is_loaded_as_one_row_of_keys():
    """A key-padding mask (B, 1, 1, Lk) has stride 0 along the queries: each step loads a 1-D row of BLOCK_N keys
    that the score tile broadcasts, not a (BLOCK_M, BLOCK_N) tile of repeated addresses (values: the fp32
    interpreter test)."""
    padded, full = make_module(KEY_PADDING, arch="sm_90").source, make_module(BOOL_MASK, arch="sm_90").source
    assert "tl.load(keep_ptr + m_base + rn)[None, :]" in padded   # the whole blocks: no mask on the load
    assert "tl.load(keep_ptr + m_base + rn, mask=(rn < " in padded   # the edge blocks: the keys past Lk
    assert "rm[:, None] * 0" not in padded
    assert "mask_ptr + m_base + rm[:, None] * " in full


@pytest.mark.integration   # runs kernel.py in a child process
def test_a_head_dim_past_what_the_kernel_holds_is_refused_by_name(tmp_path):
    """The referee's edges stage stretched the head dim to 2^20 + 3 on the H200 (2026-12-02): Triton's
    CompilationError came out, not a named refusal, and the generated SDPA failed the referee. The op now refuses
    a head dim past MAX_HEAD_DIM, naming the tensors and the size, before any launch."""
    from kerntailor.codegen.attention import MAX_HEAD_DIM

    source = make_module(PLAIN).source
    assert f"> {MAX_HEAD_DIM}:" in source and "raise ValueError(f\"the head dim of q, k, v is {" in source
    kernel = tmp_path / "kernel.py"
    kernel.write_text(source)
    script = textwrap.dedent(f'''
        import importlib.util, torch
        spec = importlib.util.spec_from_file_location("k", {str(kernel)!r})
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        q = torch.randn(1, 1, 4, {MAX_HEAD_DIM + 1})
        try:
            mod.ModelNew()(q, q, q)
            print("no error")
        except ValueError as e:
            print("ValueError:", e)
    ''')
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TRITON_INTERPRET="1"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"ValueError: the head dim of q, k, v is {MAX_HEAD_DIM + 1}:" in run.stdout, run.stdout


def test_long_key_ranges_run_in_chunks_in_fp32_only():
    """fp32 kernels walk a run-time key length past LONG_KEYS in chunks of KCHUNK blocks (a short accumulation
    chain), chosen per call by the host; up to LONG_KEYS KCHUNK is 1, today's loop; 16-bit kernels keep it."""
    from kerntailor.codegen.attention import LONG_KEYS, key_chunks

    assert key_chunks(LONG_KEYS, 32) == 1 and key_chunks(40, 32) == 1
    assert key_chunks((1 << 20) + 3, 32) == 32   # 1024 keys a chunk, 1025 chunks: the edges stage's length
    assert key_chunks(LONG_KEYS + 1, 256) == 2
    fp32, bf16 = make_module(WHERE_KEEP).source, make_module(WHERE_KEEP, dtype="bf16").source
    assert "if KCHUNK == 1:" in fp32 and "acc = acc * alpha[:, None] + acc_c" in fp32
    # BLOCK_N 64 (the fp32 default)
    assert f"KCHUNK=1 if d4 <= {LONG_KEYS} else max(2, triton.next_power_of_2(int(d4 ** 0.5)) // 64)" in fp32
    assert "KCHUNK" not in bf16


# --- interpreter: values against torch's SDPA ---------------------------------------------------------------

_RUN = textwrap.dedent('''
    import importlib.util, json, sys
    import torch
    import torch.nn.functional as F

    results = []
    for path, shapes, dtype, kind, special in json.loads(sys.argv[1]):
        spec = importlib.util.spec_from_file_location("k", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        torch.manual_seed(0)
        dt = getattr(torch, dtype)
        ins = [torch.randn(s).to(dt) for s in shapes[:3]]
        if kind == "bool":
            mask = torch.rand(shapes[3]) > 0.3
            mask[..., 0] = True
            mask[..., -1, :] = False          # a row with every key masked: SDPA gives 0
            ins.append(mask)
        elif kind == "keypad":                # one row of keys per sequence, broadcast over heads and queries
            mask = torch.rand(shapes[3]) > 0.4
            mask[..., 0] = True
            ins.append(mask)
        elif kind == "add":
            ins.append(torch.randn(shapes[3]).to(dt))
        if special:                           # NaN and Inf in v at keys a causal row masks, NaN in k too
            ins[2][..., shapes[2][-2] - 2, 0] = float("nan")
            ins[2][..., shapes[2][-2] // 2, 1] = float("inf")
            ins[1][..., shapes[1][-2] - 1, 3] = float("nan")
        out = mod.ModelNew()(*ins)
        kw = {"is_causal": kind in ("causal", "gqa")} | ({"enable_gqa": True} if kind in ("gqa", "gqa_plain") else {})
        if kind in ("bool", "keypad"):
            kw["attn_mask"] = ins[3]
        elif kind == "add":
            kw |= {"attn_mask": ins[3].double(), "scale": 0.3}
        ref = F.scaled_dot_product_attention(*[x.double() for x in ins[:3]], **kw)
        same_nan = bool(torch.equal(out.isnan(), ref.isnan()))
        same_nan = same_nan and bool(torch.equal(out.isinf(), ref.isinf())) and bool(torch.equal(
            out[ref.isinf()].double(), ref[ref.isinf()]))   # and the same Inf, sign included
        finite = ref.isfinite()
        err = ((out.double()[finite] - ref[finite]).norm() / ref[finite].norm()).item()
        results.append({"path": path, "shapes": shapes, "err": err, "same_nan": same_nan,
                        "nan": int(ref.isnan().sum()), "zeros": int((ref == 0).all(-1).sum())})
    print(json.dumps(results))
''')

TOL = {"float32": 1e-5, "bfloat16": 1.6e-2}   # the referee's ‖Δ‖/‖ref‖ per dtype (verify/tolerance.py)


def _run(jobs: list) -> list[dict]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    run = subprocess.run([sys.executable, "-c", _RUN, json.dumps(jobs)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def _write(tmp_path: Path, path: Path, dtype: str | None, knobs: dict | None = None, arch: str = "gfx942") -> str:
    module = make_module(path, {"attention": knobs or {}}, dtype, arch)
    out = tmp_path / f"{path.stem}_{dtype}_{len(list(tmp_path.iterdir()))}.py"
    out.write_text(module.source)
    return str(out)


@pytest.mark.interpreter
@pytest.mark.slow
def test_values_match_sdpa_fp32(tmp_path):
    """fp32 (ieee) within the referee's fp32 tolerance: odd lengths (Lq, Lk no multiple of the blocks), head
    dims 16, 64, 80 and 128, decode (Lq = 1), causal, GQA, boolean and additive masks, Lq != Lk."""
    small = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}   # several blocks on small shapes: both loops run
    plain, causal = _write(tmp_path, PLAIN, None, small), _write(tmp_path, CAUSAL, None, small)
    gqa = _write(tmp_path, GQA, None, small)
    bool_mask, add_mask = _write(tmp_path, BOOL_MASK, None, small), _write(tmp_path, ADD_MASK, None, small)
    key_padding = _write(tmp_path, KEY_PADDING, None, small)
    cross, cross_causal = _write(tmp_path, CROSS, None, small), _write(tmp_path, CROSS_CAUSAL, None, small)
    jobs = [
        (plain, [[1, 2, 37, 64]] * 3, "float32", "plain", False),
        (plain, [[1, 1, 33, 128]] * 3, "float32", "plain", False),
        (plain, [[2, 1, 29, 80]] * 3, "float32", "plain", False),
        (cross, [[1, 2, 1, 64], [1, 2, 45, 64], [1, 2, 45, 64]], "float32", "plain", False),   # decode
        (cross, [[2, 3, 19, 64], [2, 3, 50, 64], [2, 3, 50, 64]], "float32", "plain", False),
        (causal, [[1, 2, 37, 64]] * 3, "float32", "causal", False),
        (causal, [[1, 1, 50, 128]] * 3, "float32", "causal", False),
        (cross_causal, [[1, 2, 1, 64], [1, 2, 45, 64], [1, 2, 45, 64]], "float32", "causal", False),  # key 0 only
        (cross_causal, [[1, 2, 50, 32], [1, 2, 19, 32], [1, 2, 19, 32]], "float32", "causal", False),  # Lq > Lk
        (gqa, [[1, 6, 35, 64], [1, 2, 35, 64], [1, 2, 35, 64]], "float32", "gqa", False),
        (gqa, [[2, 4, 19, 16], [2, 1, 19, 16], [2, 1, 19, 16]], "float32", "gqa", False),      # MQA
        (bool_mask, [[1, 2, 19, 64], [1, 2, 41, 64], [1, 2, 41, 64], [19, 41]], "float32", "bool", False),
        (add_mask, [[1, 2, 37, 80], [1, 2, 37, 80], [1, 2, 37, 80], [1, 2, 37, 37]], "float32", "add", False),
        (key_padding, [[2, 3, 37, 32], [2, 3, 37, 32], [2, 3, 37, 32], [2, 1, 1, 37]], "float32", "keypad", False),
    ]
    for r in _run(jobs):
        assert r["err"] < TOL["float32"] and r["same_nan"], r
        assert r["nan"] == 0
    # the boolean mask's last row has every key masked: SDPA gives zeros there (and the kernel matched it)
    assert all(r["zeros"] > 0 for r in _run(jobs[-3:-2]))


@pytest.mark.interpreter
@pytest.mark.slow
def test_values_match_sdpa_bf16_and_special_values(tmp_path):
    """bf16 operands (fp32 statistics and accumulation) within the bf16 tolerance at the default tiles; NaN and
    Inf in v at keys a causal row masks give NaN exactly where SDPA gives it (its 0 x NaN), a NaN in k above the
    diagonal does not (masked_fill), with and without GQA."""
    plain, causal = _write(tmp_path, PLAIN, "bf16"), _write(tmp_path, CAUSAL, "bf16")
    small = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}
    causal32, gqa32 = _write(tmp_path, CAUSAL, None, small), _write(tmp_path, GQA, None, small)
    jobs = [
        (plain, [[1, 2, 150, 64]] * 3, "bfloat16", "plain", False),
        (causal, [[1, 1, 140, 128]] * 3, "bfloat16", "causal", False),
        (causal32, [[1, 2, 37, 64]] * 3, "float32", "causal", True),
        (gqa32, [[1, 4, 33, 32], [1, 2, 33, 32], [1, 2, 33, 32]], "float32", "gqa", True),
    ]
    results = _run(jobs)
    for r in results[:2]:
        assert r["err"] < TOL["bfloat16"] and r["same_nan"], r
    for r in results[2:]:
        assert r["same_nan"] and r["nan"] > 0 and r["err"] < TOL["float32"], r


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("path", [GQA, BOOL_MASK, ADD_MASK, DATA / "mixed" / "sdpa_tail.py"],
                         ids=["gqa", "bool_mask", "additive_mask", "tail"])
def test_generated_modules_pass_the_referee(path, tmp_path):
    """The referee's whole protocol (variants, draws, special values, poisoned outputs, static check) on the
    default schedule; sdpa_tail's `* 0.5 + q` is fused as the attention's epilogue."""
    _, _, _, plan = prepared(path)
    assert [g.family for g in plan.groups] == ["attention"]
    verify(path, make_module(path), tmp_path)


@pytest.mark.interpreter
@pytest.mark.slow
def test_causal_v_scan_in_key_chunks(tmp_path, monkeypatch):
    """The causal kernel's V scan split in several key chunks (SCAN_KEYS lowered to 16): NaN and Inf in v at keys
    of different chunks give NaN exactly where SDPA gives it (the chunks meet in an atomic max), with GQA too."""
    import kerntailor.codegen.attention as attention

    monkeypatch.setattr(attention, "SCAN_KEYS", 16)
    small = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}
    causal, gqa = _write(tmp_path, CAUSAL, None, small), _write(tmp_path, GQA, None, small)
    assert "SCAN_KEYS=16" in Path(causal).read_text()
    jobs = [(causal, [[1, 2, 70, 32]] * 3, "float32", "causal", True),     # bad keys 68 and 35: chunks 4 and 2
            (gqa, [[1, 4, 50, 16], [1, 2, 50, 16], [1, 2, 50, 16]], "float32", "gqa", True)]
    for r in _run(jobs):
        assert r["same_nan"] and r["nan"] > 0 and r["err"] < TOL["float32"], r


@pytest.mark.interpreter
@pytest.mark.slow
def test_values_match_sdpa_through_tma_descriptors(tmp_path):
    """TMA=1 (sm_90): K and V through tensor descriptors where the host finds every stride and address 16-byte
    aligned (rows past Lk, columns past the head dim read as zeros), the pointer loads where not (head dim 33
    in fp32): odd lengths, padded head dims, causal with NaN and Inf in v, GQA, a boolean mask, bf16."""
    tma = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2, "TMA": 1}
    plain, causal, gqa, bool_mask = (_write(tmp_path, path, None, tma, "sm_90") for path in
                                     (PLAIN, CAUSAL, GQA, BOOL_MASK))
    source = Path(plain).read_text()
    assert "k_desc = tl.make_tensor_descriptor(" in source and "if USE_TMA:" in source
    assert "USE_TMA=int(" in source and "triton.set_allocator(_tma_scratch)" in source
    causal16 = _write(tmp_path, CAUSAL, "bf16", {"TMA": 1}, "sm_90")
    jobs = [
        (plain, [[1, 2, 37, 64]] * 3, "float32", "plain", False),
        (plain, [[2, 1, 29, 80]] * 3, "float32", "plain", False),
        (plain, [[1, 1, 21, 33]] * 3, "float32", "plain", False),      # 33 x 4 B rows: the pointer loads
        (causal, [[1, 2, 37, 64]] * 3, "float32", "causal", True),
        (gqa, [[1, 4, 33, 32], [1, 2, 33, 32], [1, 2, 33, 32]], "float32", "gqa", True),
        (bool_mask, [[1, 2, 19, 64], [1, 2, 41, 64], [1, 2, 41, 64], [19, 41]], "float32", "bool", False),
        (causal16, [[1, 1, 140, 128]] * 3, "bfloat16", "causal", False),
    ]
    for job, r in zip(jobs, _run(jobs)):
        assert r["same_nan"] and r["err"] < TOL[job[2]], r
        assert (r["nan"] > 0) == job[4], r
    with pytest.raises(CodegenUnsupported, match="TMA loads on gfx942"):
        make_module(PLAIN, {"attention": tma}, None, "gfx942")


_RUN_WRITTEN = textwrap.dedent('''
    import importlib.util, json, sys
    import torch

    def load(path, name):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    kernel, problem = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 2, 19, 32), torch.randn(1, 2, 41, 32), torch.randn(1, 2, 41, 32)
    keep = torch.rand(19, 41) > 0.3
    keep[:, 0] = True
    keep[5] = False                    # a row with every key masked: NaN as written (SDPA would give 0)
    k[0, 0, 3, 1] = float("nan")       # a NaN score at key 3, which every row but 8 masks: replaced by -inf
    keep[:, 3] = False
    keep[8, 3] = True                  # ... but row 8 sees it: NaN
    out = load(kernel, "k").ModelNew()(q, k, v, keep)
    ref = load(problem, "p").Model().double()(q.double(), k.double(), v.double(), keep)
    finite = ref.isfinite()
    print(json.dumps({"same_nan": bool(torch.equal(out.isnan(), ref.isnan())),
                      "nan_rows": sorted({int(i) for i in ref.isnan().nonzero()[:, 2]}),
                      "err": ((out.double()[finite] - ref[finite]).norm() / ref[finite].norm()).item()}))
''')


@pytest.mark.interpreter
@pytest.mark.slow
def test_values_match_sdpa_fp32_in_key_chunks(tmp_path, monkeypatch):
    """The chunked key loop (KCHUNK > 1) on small shapes, LONG_KEYS lowered to 16 for the generation: plain,
    causal (chunks below the diagonal), GQA, boolean and additive masks, NaN and Inf in v and k, odd lengths,
    and the written-out semantics (a row the mask empties is NaN), all as the plain loop gives them."""
    import kerntailor.codegen.attention as attention

    monkeypatch.setattr(attention, "LONG_KEYS", 16)
    small = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2}
    names = {n: _write(tmp_path, path, None, small) for n, path in
             (("plain", PLAIN), ("causal", CAUSAL), ("gqa", GQA), ("bool", BOOL_MASK), ("add", ADD_MASK),
              ("cross", CROSS), ("cross_causal", CROSS_CAUSAL), ("written", WHERE_KEEP))}
    assert all("if KCHUNK == 1:" in Path(f).read_text() for f in names.values())
    jobs = [
        (names["plain"], [[1, 2, 37, 64]] * 3, "float32", "plain", False),          # KCHUNK 2: one chunk
        (names["cross"], [[1, 2, 21, 32], [1, 2, 301, 32], [1, 2, 301, 32]], "float32", "plain", False),   # 9
        (names["cross"], [[1, 1, 1, 16], [1, 1, 1150, 16], [1, 1, 1150, 16]], "float32", "plain", False),  # 17 + 3
        (names["causal"], [[1, 1, 150, 64]] * 3, "float32", "causal", False),
        (names["causal"], [[1, 2, 70, 32]] * 3, "float32", "causal", True),
        (names["cross_causal"], [[1, 2, 50, 32], [1, 2, 19, 32], [1, 2, 19, 32]], "float32", "causal", False),
        (names["gqa"], [[1, 4, 90, 32], [1, 2, 90, 32], [1, 2, 90, 32]], "float32", "gqa", True),
        (names["bool"], [[1, 2, 19, 64], [1, 2, 141, 64], [1, 2, 141, 64], [19, 141]], "float32", "bool", False),
        (names["add"], [[1, 2, 97, 80]] * 3 + [[1, 2, 97, 97]], "float32", "add", False),
    ]
    results = _run(jobs)
    for job, r in zip(jobs, results):
        assert r["err"] < TOL["float32"] and r["same_nan"], r
        assert (r["nan"] > 0) == job[4], r
    assert results[7]["zeros"] > 0   # the boolean mask's last row: every key masked, 0 as SDPA
    run = subprocess.run([sys.executable, "-c", _RUN_WRITTEN, names["written"], str(WHERE_KEEP)],
                         capture_output=True, text=True, env=dict(os.environ, TRITON_INTERPRET="1"), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert r["same_nan"] and r["nan_rows"] == [5, 8] and r["err"] < TOL["float32"], r


@pytest.mark.interpreter
@pytest.mark.slow
def test_written_out_special_values_match_eager(tmp_path):
    """The written-out semantics the Attention node carries: a row the mask empties is NaN (not SDPA's 0), and a
    NaN score at a masked key is replaced (masked_fill), so only the rows that see it are NaN (head 0 only)."""
    kernel = _write(tmp_path, WHERE_KEEP, None, {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2})
    run = subprocess.run([sys.executable, "-c", _RUN_WRITTEN, kernel, str(WHERE_KEEP)], capture_output=True,
                         text=True, env=dict(os.environ, TRITON_INTERPRET="1"), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert r["same_nan"] and r["nan_rows"] == [5, 8] and r["err"] < TOL["float32"], r


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("path, dtype", [(MINGPT, None), (MINGPT, "bf16"), (WHERE_KEEP, None), (WRITTEN_ADD, None),
                                         (GPT_BLOCK, None), (WRITTEN_RELU, None), (WRITTEN_RELU, "bf16"),
                                         (HEADS_MERGED, None), (HEADS_MERGED, "bf16"), (HEADS_TRANSPOSED, None)],
                         ids=["mingpt", "mingpt_bf16", "where_keep", "additive", "gpt_block", "relu", "relu_bf16",
                              "heads_merged", "heads_merged_bf16", "heads_transposed"])
def test_written_out_modules_pass_the_referee(path, dtype, tmp_path):
    """The referee's whole protocol (variants, draws, special values, edges) on the default schedule; in bf16 the
    softmax's casts (to fp32 and back) are part of the matched chain. ReLU attention (a GPT block's heads, relu
    weights, no normalisation): in bf16 its unnormalised weights are cast for the second product, which the
    interpreter once truncated (verify/interp.py now rounds to nearest even, as the GPU)."""
    verify(path, make_module(path, dtype=dtype), tmp_path, dtype, edges=True)


@pytest.mark.gpu
@pytest.mark.parametrize("path, dtype", [(L3 / "causal_attention_masked.py", "bf16"),
                                         (L3 / "causal_attention_masked.py", None),
                                         (L3 / "decode_attention.py", "bf16"), (L3 / "decode_attention.py", None),
                                         (MINGPT, None), (WHERE_KEEP, None)],
                         ids=["causal_masked_bf16", "causal_masked_fp32", "decode_bf16", "decode_fp32", "mingpt",
                              "where_keep"])
def test_gpu_written_out_attention_passes_the_referee(path, dtype, tmp_path):
    """On the GPU (compiled for sm_90 on an NVIDIA machine, gfx942 on AMD): the referee's protocol on the default
    schedule, at the problems' own sizes."""
    import torch

    arch = "gfx942" if torch.version.hip else "sm_90"
    verify(path, make_module(path, dtype=dtype, arch=arch), tmp_path, dtype)


# --- compile: cross-compiled for gfx942 and sm_90 (no GPU) -------------------------------------------------

COMPILE_TARGETS = {"mi300x": "gfx942", "h200": "sm_90"}
# case -> (problem, dtype, knob overrides): the default schedules at the problems' own (KernelBench) sizes
COMPILE_CASES = {
    "sdpa_bf16": (L1 / "sdpa.py", "bf16", {}),
    "causal_bf16": (L3 / "causal_attention_sdpa.py", "bf16", {}),
    "gqa_bf16": (L3 / "gqa_causal_attention.py", "bf16", {}),
    "sdpa_fp32_tf32x3": (L1 / "sdpa.py", None, {"precision": "tf32x3"}),
    "written_causal_masked_bf16": (L3 / "causal_attention_masked.py", "bf16", {}),   # its mask proved causal
    "written_decode_bf16": (L3 / "decode_attention.py", "bf16", {}),
    "written_relu_bf16": (ATT / "written_relu.py", "bf16", {}),   # O stored at the merged heads' strides
    "heads_transposed_bf16": (HEADS_TRANSPOSED, "bf16", {}),        # O as it is and at the merged heads' strides
    # at two copies' strides from one tile, at 64 x 32: at its default 64 x 64 this small problem spills SGPRs (no
    # VGPRs) on gfx942 with or without the copies (18; 56 returning O as it is), as at 128 x 64, 8 warps (16; 6),
    # at 64 x 32 neither (0; 0); sm_90 none. KernelBench level-3 31 and 50 (bf16) build to the same registers with
    # and without their layout store, 0 spills on both targets (cross-compiled, triton 3.6, 2026-12-05)
    "heads_merged_bf16_64x32": (HEADS_MERGED, "bf16", {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4}),
    # sm_90's TMA loads at the tutorial's Hopper tile (the pointer loads spill 8-16 bytes there: causal, GQA)
    "causal_bf16_tma_128x128": (L3 / "causal_attention_sdpa.py", "bf16",
                                {"TMA": 1, "BLOCK_N": 128, "num_stages": 3}),
}


@pytest.fixture(scope="module")
def attention_built(tmp_path_factory) -> dict[tuple[str, str], object]:
    """(case, target name) -> BuildResult of the attention kernel (the last launch of its group)."""
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source

    cache = BuildCache(tmp_path_factory.mktemp("attention-build-cache"))
    out = {}
    with BuildPool(None, timeout_s=600) as pool:
        for name, arch in COMPILE_TARGETS.items():
            cases = {c: v for c, v in COMPILE_CASES.items()
                     if not (arch != "sm_90" and ("tf32x3" in c or "tma" in c))}
            sources = []
            for path, dtype, knobs in cases.values():
                module = make_module(path, {"attention": knobs}, dtype, arch)
                kernel = next(k for k in module.kernels if k.kernel_name.endswith("attention_kernel"))
                sources.append(kernel_source(module.source, kernel, prepared(path, dtype)[2]))
            for case, result in zip(cases, pool.build(sources, [get_target(name)], cache=cache)):
                out[case, name] = result
    return out


@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMPILE_TARGETS))
def test_default_schedules_cross_compile_with_matrix_instructions(attention_built, name):
    """The default schedules build for gfx942 (MFMA) and sm_90 (wgmma, or mma.sync), within the target's limits;
    the ISA facts (registers, spills, LDS) are what the builder reports for every kernel."""
    arch = COMPILE_TARGETS[name]
    prefix = ("wgmma", "mma") if arch == "sm_90" else ("v_mfma",)
    for (case, target), r in attention_built.items():
        if target != name:
            continue
        assert r.ok and not r.rejected_reason, f"{case} on {name}: {r.error or r.rejected_reason}"
        facts = r.facts
        assert facts.registers > 0 and facts.lds_bytes > 0
        assert facts.matrix_instr_count > 0 and all(k.startswith(prefix) for k in facts.matrix_instr_kinds), facts
        # 16-bit operands: no spills at the default tiles (fp32 ieee on sm_90 spills: FMAs). The written-out causal
        # mask, once a boolean mask tile that spilled 6 VGPRs on gfx942 at 128 x 64, 8 warps, D = 128, is proved
        # causal at capture (capture/causal_mask.py) and read no more: 0 spills (triton 3.6, 2026-12-02)
        if "bf16" in case:
            assert any("bf16" in k for k in facts.matrix_instr_kinds), facts.matrix_instr_kinds
            assert facts.spills == 0, (case, facts)
