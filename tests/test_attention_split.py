"""Split-keys attention (codegen/attention_split.py, flash-decoding): SPLIT key chunks, a program each, then a
combine kernel. Unit: the schedule, the space's rule and seeds, what a Config costs, the two kernels and what
is refused. Interpreter: values against SDPA at decode (Lq = 1, Lk 77 and 300), a few queries (Lq = 4) causal and
not, masks, GQA, bf16 and fp32, special values, the referee's protocol, and the same bits on a second run.
Compile: both kernels cross-compiled for sm_90 and gfx942 at a Llama decode step's shapes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from helpers import DATA, ROOT, make_module, prepared, verify
from kerntailor.codegen import ScheduleError
from kerntailor.codegen.attention import AttentionSchedule
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.search.config import Config
from kerntailor.search.families import key_splits, loop_trips, make_space, program_count, seed_knobs, space_family
from kerntailor.targets import get_target
from test_codegen_attention import TOL, _run, _write

ATT = DATA / "attention"
CROSS, CROSS_CAUSAL, GQA_DECODE = ATT / "sdpa_cross.py", ATT / "sdpa_cross_causal.py", ATT / "sdpa_gqa_decode.py"
BOOL_MASK, ADD_MASK, WRITTEN_RELU = ATT / "sdpa_bool_mask.py", ATT / "sdpa_additive_mask.py", ATT / "written_relu.py"
LLAMA_B1 = ROOT / "benchmarks" / "data" / "attn_probe" / "sdpa_gqa_decode_b1.py"   # a Llama decode step, batch 1
SMALL = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2, "SPLIT": 4}


# --- unit ----------------------------------------------------------------------------------------------------

def test_schedule_takes_split_as_a_power_of_two_and_shows_it_only_when_set():
    assert AttentionSchedule(BLOCK_M=16, BLOCK_N=16).SPLIT == 1
    assert "SPLIT" not in AttentionSchedule(BLOCK_M=16, BLOCK_N=16).knobs()
    assert AttentionSchedule(BLOCK_M=16, BLOCK_N=16, SPLIT=8).knobs()["SPLIT"] == 8
    with pytest.raises(ScheduleError, match="SPLIT=3"):
        AttentionSchedule(BLOCK_M=16, BLOCK_N=16, SPLIT=3)


def test_split_is_offered_where_the_grid_is_below_the_compute_units():
    """Batch 1 (32 heads, one query) on the H200's 132 SMs: splits up to 64; batch 32 (1024 programs): none."""
    h200, mi300x = get_target("h200"), get_target("mi300x")
    assert key_splits(h200, BH=32, Lq=1, Lk=4096) == (2, 4, 8, 16, 32, 64)
    assert key_splits(h200, BH=1024, Lq=1, Lk=4096) == ()
    assert key_splits(mi300x, BH=256, Lq=4, Lk=4096) != ()     # 256 programs < 304 CUs
    assert key_splits(h200, BH=32, Lq=1, Lk=40) == (2,)          # at least 16 keys a chunk
    sizes = {"BH": 32, "Lq": 1, "Lk": 4096, "D": 128, "Dv": 128}
    space = make_space("attention", h200, dtype="bf16", **sizes)
    assert space.knob("SPLIT").values == (1, 2, 4, 8, 16, 32, 64)
    assert "SPLIT" not in make_space("attention", h200, dtype="bf16", **(sizes | {"BH": 1024})).names
    seeds = seed_knobs("attention", h200, dtype="bf16", **sizes)
    assert [s["SPLIT"] for s in seeds] == [8, 1]                 # 8 x 32 programs >= 132 SMs; unsplit beside it
    assert all(space.is_valid(space.config(**s)) for s in seeds)
    assert space.is_valid(space.config(**(seeds[0] | {"TMA": 1})))   # K and V of a chunk through descriptors
    amd = seed_knobs("attention", mi300x, dtype="bf16", **sizes)
    amd_space = make_space("attention", mi300x, dtype="bf16", **sizes)
    assert [s["SPLIT"] for s in amd] == [16, 1] and all(amd_space.is_valid(amd_space.config(**s)) for s in amd)


def test_a_split_config_costs_its_chunks_and_partials():
    sizes = {"BH": 32, "Lq": 1, "Lk": 4096, "D": 128, "Dv": 128}
    split = Config("attention", {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4, "SPLIT": 8})
    assert program_count(split, sizes) == 32 * 8 and loop_trips(split, sizes) == 4096 // 8 // 64
    cost = space_family("attention").split(split, sizes)
    assert cost.launches == 1 and cost.partials == 32 * 1 * 8 * (128 + 2)


def test_split_source_is_two_kernels_and_split_one_is_todays():
    module = make_module(LLAMA_B1, {"attention": {"BLOCK_M": 16, "BLOCK_N": 64, "SPLIT": 8}}, "bf16", "sm_90")
    (group,) = module.kernels
    assert [k.kernel_name for k in group.launches] == ["k0_attention_kernel_partials", "k0_attention_kernel"]
    assert "SPLIT=k0_split" in module.source and "torch.empty(" in module.source
    # SPLIT per call (per_call_split): at most the schedule's 8, at most the keys' 64-key blocks, a power of two;
    # both kernels and the partials' grid take it, the workspace keeps the schedule's size
    (line,) = [x.strip() for x in module.source.splitlines() if x.strip().startswith("k0_split = ")]
    import triton
    for keys, want in ((4096, 8), (512, 8), (300, 4), (129, 2), (77, 2), (64, 1), (1, 1)):
        scope = {"triton": triton, "d4": keys}
        exec(line.split("  #")[0], scope)
        assert scope["k0_split"] == want, (keys, scope["k0_split"])
    assert "* k0_split,)](" in module.source and module.source.count("SPLIT=k0_split") == 2
    assert "torch.empty(d0 * d1 * 8 * 1 * d2," in module.source
    assert "for s in range(SPLIT):  # in chunk order: the same bits every run" in module.source
    assert "atomic" not in module.source                        # deterministic: no atomics
    one = make_module(LLAMA_B1, {"attention": {"BLOCK_M": 16, "BLOCK_N": 64, "SPLIT": 1}}, "bf16", "sm_90")
    default = make_module(LLAMA_B1, {"attention": {"BLOCK_M": 16, "BLOCK_N": 64}}, "bf16", "sm_90")
    assert one.source == default.source and "SPLIT" not in one.source


def test_split_refuses_what_attention_refuses_by_name():
    with pytest.raises(CodegenUnsupported, match="TMA loads on gfx942"):
        make_module(CROSS, {"attention": SMALL | {"TMA": 1}}, None, "gfx942")


# --- interpreter ---------------------------------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.slow
def test_split_values_match_sdpa(tmp_path):
    """fp32 within the referee's fp32 tolerance, bf16 within bf16's: decode (Lq = 1) at Lk 77 and 300 (chunks of
    unequal use, one past the keys), Lq = 4 causal (top-left: most chunks past the diagonal) and not, GQA, boolean
    and additive masks (a row the boolean mask empties: 0), NaN and Inf in v (and NaN in k) at causal-masked keys;
    with TMA descriptors (sm_90) too."""
    cross, causal = _write(tmp_path, CROSS, None, SMALL), _write(tmp_path, CROSS_CAUSAL, None, SMALL)
    gqa, bool_mask = _write(tmp_path, GQA_DECODE, None, SMALL), _write(tmp_path, BOOL_MASK, None, SMALL)
    add_mask = _write(tmp_path, ADD_MASK, None, SMALL)
    cross16 = _write(tmp_path, CROSS, "bf16", {"BLOCK_M": 16, "BLOCK_N": 32, "SPLIT": 8})
    gqa16 = _write(tmp_path, GQA_DECODE, "bf16", {"BLOCK_M": 16, "BLOCK_N": 16, "SPLIT": 2})
    tma = SMALL | {"TMA": 1}   # sm_90: K and V through descriptors from the chunk's first key
    cross_tma, causal_tma = (_write(tmp_path, path, None, tma, "sm_90") for path in (CROSS, CROSS_CAUSAL))
    jobs = [
        (cross, [[1, 2, 1, 64], [1, 2, 77, 64], [1, 2, 77, 64]], "float32", "plain", False),
        (cross, [[2, 1, 1, 32], [2, 1, 300, 32], [2, 1, 300, 32]], "float32", "plain", False),
        (cross, [[1, 2, 4, 64], [1, 2, 77, 64], [1, 2, 77, 64]], "float32", "plain", False),
        (causal, [[1, 2, 4, 64], [1, 2, 300, 64], [1, 2, 300, 64]], "float32", "causal", True),
        (causal, [[1, 2, 20, 32], [1, 2, 77, 32], [1, 2, 77, 32]], "float32", "causal", False),
        (gqa, [[2, 8, 1, 64], [2, 2, 77, 64], [2, 2, 77, 64]], "float32", "gqa_plain", False),
        (bool_mask, [[1, 2, 4, 64], [1, 2, 77, 64], [1, 2, 77, 64], [4, 77]], "float32", "bool", False),
        (add_mask, [[1, 2, 4, 32], [1, 2, 4, 32], [1, 2, 4, 32], [1, 2, 4, 4]], "float32", "add", False),
        (cross16, [[1, 2, 1, 128], [1, 2, 300, 128], [1, 2, 300, 128]], "bfloat16", "plain", False),
        (gqa16, [[1, 4, 1, 64], [1, 2, 77, 64], [1, 2, 77, 64]], "bfloat16", "gqa_plain", False),
        (cross_tma, [[1, 2, 1, 64], [1, 2, 77, 64], [1, 2, 77, 64]], "float32", "plain", False),
        (cross_tma, [[1, 1, 3, 33], [1, 1, 300, 33], [1, 1, 300, 33]], "float32", "plain", False),  # pointer loads
        (causal_tma, [[1, 2, 4, 64], [1, 2, 300, 64], [1, 2, 300, 64]], "float32", "causal", True),
    ]
    results = _run(jobs)
    for job, r in zip(jobs, results):
        assert r["err"] < TOL[job[2]] and r["same_nan"], (job[1], r)
        assert (r["nan"] > 0) == job[4], r
    assert results[6]["zeros"] > 0   # the boolean mask's last row: every key masked, 0 as SDPA


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("path, dtype", [(GQA_DECODE, None), (CROSS_CAUSAL, None), (WRITTEN_RELU, None),
                                         (GQA_DECODE, "bf16")], ids=["gqa", "causal", "relu", "gqa_bf16"])
def test_split_modules_pass_the_referee(path, dtype, tmp_path):
    """The referee's whole protocol (variants, draws, special values, edges, poisoned outputs, a second run) on a split
    schedule; ReLU attention's combine is a plain sum, the written-out mask's empty rows NaN."""
    knobs = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2, "SPLIT": 2}
    verify(path, make_module(path, {"attention": knobs}, dtype), tmp_path, dtype, edges=True)


_RUN_TWICE = textwrap.dedent('''
    import importlib.util, sys
    import torch

    spec = importlib.util.spec_from_file_location("k", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 8, 1, 64), torch.randn(2, 2, 300, 64), torch.randn(2, 2, 300, 64)
    model = mod.ModelNew()
    first, second = model(q, k, v), model(q.clone(), k.clone(), v.clone())
    print(int(torch.equal(first.view(torch.int32), second.view(torch.int32))), int(first.isfinite().all()))
''')


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("pack", [0, 1])
def test_split_kernel_gives_the_same_bits_twice(pack, tmp_path):
    kernel = _write(tmp_path, GQA_DECODE, None, SMALL | {"SPLIT": 8, "PACK": pack})   # GQA's heads packed or not
    run = subprocess.run([sys.executable, "-c", _RUN_TWICE, kernel], capture_output=True, text=True,
                         env=dict(os.environ, TRITON_INTERPRET="1"), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["1", "1"]


# --- compile: a Llama decode step ----------------------------------------------------------------------------

COMPILE = {"h100": "sm_90", "mi300x": "gfx942"}


@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMPILE))
def test_split_kernels_cross_compile_at_a_llama_decode_step(name, tmp_path):
    """Batch 1, 32 query heads on 8 KV heads, Lk 4096, D 128, bf16, at each target's decode seed (sm_90: with TMA
    too): the partials kernel (matrix instructions, no spills) and the combine kernel build within the target's
    limits. Cross-compiled (triton 3.6, 2026-12-05; registers, spills, shared memory / LDS bytes): sm_90 at 16 x 64,
    4 warps, 2 stages, SPLIT 8: partials 96, 0, 38,912 (with TMA 72, 0, 38,944), combine 40, 0, 64; gfx942 at
    16 x 64, 4 warps, 1 stage, SPLIT 16: partials 146 VGPRs, 0, 16,384, combine 62, 0, 64."""
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source

    arch, target = COMPILE[name], get_target(name)
    _, _, gen, plan = prepared(LLAMA_B1, "bf16")
    (seed, _) = seed_knobs("attention", target, dtype="bf16", BH=32, Lq=1, Lk=4096, D=128, Dv=128)
    seed |= {"PACK": 0}   # one query head a program (test_attention_pack.py cross-compiles the packed kernels)
    schedules = [seed] + ([seed | {"TMA": 1}] if arch == "sm_90" else [])
    modules = [make_module(LLAMA_B1, {"attention": s}, "bf16", arch) for s in schedules]
    launches = [k for m in modules for k in m.kernels[0].launches]
    sources = [kernel_source(m.source, k, gen) for m in modules for k in m.kernels[0].launches]
    with BuildPool(None, timeout_s=600) as pool:
        results = pool.build(sources, [target], cache=BuildCache(tmp_path / "cache"))
    facts = [(k.kernel_name, (r.facts.registers, r.facts.spills, r.facts.lds_bytes)) for k, r in zip(launches, results)]
    for k, r in zip(launches, results):
        assert r.ok and not r.rejected_reason, f"{k.kernel_name} on {name}: {r.error or r.rejected_reason}"
        assert r.facts.spills == 0, facts
        if k.kernel_name.endswith("_partials"):
            assert r.facts.matrix_instr_count > 0, facts
    print(facts)


def test_the_cost_model_prefers_the_split_seed_at_batch_one():
    """Predicted (analytical model, H200): at a Llama decode step of batch 1 the unsplit seed's 32 programs leave
    most SMs idle (wave quantization); the split seed's 256 fill them, for one more launch and its partials."""
    from kerntailor.costmodel.analytical import AnalyticalModel
    from kerntailor.costmodel.candidate import Candidate, Work

    h200 = get_target("h200")
    sizes = {"BH": 32, "Lq": 1, "Lk": 4096, "D": 128, "Dv": 128}
    space = make_space("attention", h200, dtype="bf16", **sizes)
    kv_bytes = 2 * 8 * 4096 * 128 * 2
    work = Work(4 * 32 * 4096 * 128, kv_bytes + 2 * 32 * 128 * 2, "bf16", True, tuple(sizes.items()))
    split, whole = (space.config(**s) for s in seed_knobs("attention", h200, dtype="bf16", **sizes))
    model = AnalyticalModel(h200)
    (t_split, t_whole) = model.predict([Candidate(split, work), Candidate(whole, work)])
    assert t_split < t_whole / 2, (t_split, t_whole)
