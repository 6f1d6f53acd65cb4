"""GQA packing (codegen/attention.py, the PACK knob): a program's rows are (query head of the group, query), the G
query heads that share one K/V head, so K and V are read once per K/V head. Unit: which attentions offer it
(pack_group), the schedule, the space and seeds, what a Config costs, the kernel text, what is refused.
Interpreter: values against SDPA (decode, a few queries, tiles that cross heads, MQA, split, TMA, bf16), the
referee's whole protocol (with a mask broadcast along the heads); the same bits twice: test_attention_split.py, packed
and not. Compile: the packed kernels
cross-compiled for sm_90 and gfx942 at a Llama decode step.
"""

from __future__ import annotations

import pytest

from helpers import DATA, ROOT, make_module, prepared, verify
from kerntailor.codegen import ScheduleError
from kerntailor.codegen.attention import AttentionSchedule, pack_group, work_sizes
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.search.config import Config
from kerntailor.search.families import make_space, padding_factor, program_count, seed_knobs
from kerntailor.targets import get_target
from test_attention_split import COMPILE
from test_codegen_attention import TOL, _run, _write

ATT = DATA / "attention"
GQA_DECODE, GQA_MASK, GQA_CAUSAL = ATT / "sdpa_gqa_decode.py", ATT / "sdpa_gqa_cache_mask.py", ATT / "sdpa_gqa.py"
PLAIN = ATT / "sdpa_plain.py"
LLAMA_B1 = ROOT / "benchmarks" / "data" / "attn_probe" / "sdpa_gqa_decode_b1.py"
LLAMA_B32 = ROOT / "benchmarks" / "data" / "attn_probe" / "sdpa_gqa_decode_b32.py"
SMALL = {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 2, "PACK": 1}
DECODE = {"BH": 32, "Lq": 1, "Lk": 4096, "D": 128, "Dv": 128}   # a Llama decode step, batch 1: 32 heads on 8


def _group(path, dtype=None):
    _, _, gen, plan = prepared(path, dtype)
    (group,) = [g for g in plan.groups if g.family == "attention"]
    return gen, group


# --- unit ----------------------------------------------------------------------------------------------------

def test_pack_is_offered_for_grouped_heads_only():
    """G = query heads per K/V head where packing applies: GQA decode (8 on 4), a mask broadcast along the heads
    (4 on 2); not causal GQA (its key range is per query), not equal heads."""
    assert pack_group(*_group(GQA_DECODE)) == 2
    assert work_sizes(*_group(GQA_DECODE))["G"] == 2
    assert pack_group(*_group(GQA_MASK)) == 2
    assert pack_group(*_group(GQA_CAUSAL)) == 0
    assert pack_group(*_group(PLAIN)) == 0 and "G" not in work_sizes(*_group(PLAIN))
    assert pack_group(*_group(LLAMA_B1, "bf16")) == 4


def test_schedule_takes_pack_as_zero_or_one():
    assert AttentionSchedule(BLOCK_M=16, BLOCK_N=16).PACK == 0
    assert "PACK" not in AttentionSchedule(BLOCK_M=16, BLOCK_N=16).knobs()
    assert AttentionSchedule(BLOCK_M=16, BLOCK_N=16, PACK=1).knobs()["PACK"] == 1
    with pytest.raises(ScheduleError, match="PACK=2"):
        AttentionSchedule(BLOCK_M=16, BLOCK_N=16, PACK=2)


def test_space_and_seeds_pack_at_decode():
    """Batch 1 on the H200: the packed grid (8 programs unsplit) takes a split of 32 chunks to fill 132 SMs, the
    unpacked one (32 programs) 8; batch 32 (1024 unpacked programs, 256 packed) no split, the packed tile alone."""
    h200 = get_target("h200")
    sizes = DECODE | {"G": 4}
    space = make_space("attention", h200, dtype="bf16", **sizes)
    assert space.knob("PACK").values == (0, 1)
    seeds = seed_knobs("attention", h200, dtype="bf16", **sizes)
    assert [(s["PACK"], s["SPLIT"]) for s in seeds] == [(1, 32), (1, 1), (0, 8), (0, 1)]
    assert all(space.is_valid(space.config(**s)) for s in seeds)
    b32 = sizes | {"BH": 1024}
    space32 = make_space("attention", h200, dtype="bf16", **b32)
    assert "SPLIT" not in space32.names and "PACK" in space32.names
    (seed,) = seed_knobs("attention", h200, dtype="bf16", **b32)
    assert seed["PACK"] == 1 and space32.is_valid(space32.config(**seed))
    assert "PACK" not in make_space("attention", h200, dtype="bf16", **DECODE).names   # no G: no knob
    long = sizes | {"Lq": 512, "Lk": 512}   # prefill: the query blocks fill the tiles already
    assert "PACK" not in make_space("attention", h200, dtype="bf16", **long).names
    amd = seed_knobs("attention", get_target("mi300x"), dtype="bf16", **sizes)
    assert [(s["PACK"], s["SPLIT"]) for s in amd][:2] == [(1, 64), (1, 1)]


def test_a_packed_config_costs_g_times_fewer_programs_and_less_padding():
    sizes = DECODE | {"BH": 1024, "G": 4}
    packed = Config("attention", {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4, "PACK": 1})
    plain = Config("attention", {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4, "PACK": 0})
    assert program_count(packed, sizes) == 256 and program_count(plain, sizes) == 1024
    assert padding_factor(packed, sizes) == 4 and padding_factor(plain, sizes) == 16


def test_packed_source_rows_span_the_heads_of_a_kv_head():
    module = make_module(GQA_DECODE, {"attention": SMALL})
    src = module.source
    assert "GQ = s3 // s4" in src and "ih = i1 * GQ + rr // s0" in src and "rm = rr % s0" in src
    assert "q_base + ih[:, None] * s5 + rm[:, None] * s2" in src     # q per row's head
    assert "k_base = i0 * s7 + i1 * s8" in src   # K/V at the program's own K/V head (not i1 * Hkv // Hq)
    assert "oh * s5 + om * s2 + od" in src and "mmask = rr[:, None] < GQ * s0" in src
    assert "k0_attention_kernel[(d0 * d4 * triton.cdiv(d1 // d4 * d2, 16),)]" in src
    split = make_module(GQA_DECODE, {"attention": SMALL | {"SPLIT": 4}}).source
    assert split.count("  # query heads per K/V head") == 2            # the partials and the combine kernel
    assert "* (GQ * s0) + rr  # the chunk's rows in the workspace" in split
    assert "* triton.cdiv(d1 // d4 * d2, 16) * k0_split,)](" in split
    unpacked = make_module(GQA_DECODE, {"attention": SMALL | {"PACK": 0}}).source
    assert "GQ" not in unpacked and "(i1 * s4 // s3)" in unpacked     # K/V at each query head's K/V head
    # the default schedule packs where it is offered (default_schedule: measured at a Llama decode step)
    assert src == make_module(GQA_DECODE, {"attention": {k: v for k, v in SMALL.items() if k != "PACK"}}).source


@pytest.mark.parametrize("name", ["h100", "mi300x"])
def test_the_cost_model_prefers_packing_at_decode(name):
    """Predicted (analytical model): at batch 32 the unpacked kernel's re-reads of each K/V head by its four query
    heads cost L2 time the packed one does not (measured on the H100: 286 against 178 us in a CUDA graph); at batch
    1 the packed split beats the unpacked one and the packed kernel unsplit (8 programs) is the slowest."""
    from kerntailor.costmodel.analytical import AnalyticalModel
    from kerntailor.costmodel.candidate import Candidate, Work

    target = get_target(name)
    model = AnalyticalModel(target)

    def predict(bh: int, **knobs) -> float:
        sizes = DECODE | {"BH": bh, "G": 4}
        space = make_space("attention", target, dtype="bf16", **sizes)
        work = Work(4 * bh * 4096 * 128, 2 * (bh // 4) * 4096 * 128 * 2 + 2 * bh * 128 * 2, "bf16", True,
                    tuple(sizes.items()))
        amd = {"num_stages": 1, "waves_per_eu": 2, "matrix_instr_nonkdim": 16}
        base = {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4} | (amd if target.is_amd else {"num_stages": 2, "TMA": 0})
        knobs = {k: v for k, v in knobs.items() if k in space.names}
        return model.predict([Candidate(space.config(**(base | knobs)), work)])[0]

    assert predict(1024, PACK=1, SPLIT=1) < predict(1024, PACK=0, SPLIT=1) / 1.2
    assert predict(32, PACK=1, SPLIT=32) < predict(32, PACK=0, SPLIT=8) < predict(32, PACK=1, SPLIT=1)


@pytest.mark.parametrize("path", [GQA_CAUSAL, PLAIN], ids=["causal", "not_gqa"])
def test_pack_refused_where_pack_group_offers_none(path):
    with pytest.raises(CodegenUnsupported, match="PACK needs grouped K/V heads"):
        make_module(path, {"attention": SMALL})


# --- interpreter ---------------------------------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.slow
def test_packed_values_match_sdpa(tmp_path):
    """fp32 within the referee's fp32 tolerance, bf16 within bf16's: one query and three (a tile holds heads of
    several queries each), MQA over 6 heads at 5 queries (30 rows: two tiles, the second crossing heads), NaN and
    Inf in v, split in 4 and 2 chunks, TMA descriptors (sm_90); and the unpacked kernel on GQA (PACK 0)."""
    plain, split = _write(tmp_path, GQA_DECODE, None, SMALL), _write(tmp_path, GQA_DECODE, None, SMALL | {"SPLIT": 4})
    bf16 = _write(tmp_path, GQA_DECODE, "bf16", SMALL | {"SPLIT": 2})
    tma = _write(tmp_path, GQA_DECODE, None, SMALL | {"TMA": 1}, "sm_90")
    unpacked = _write(tmp_path, GQA_DECODE, None, SMALL | {"PACK": 0, "SPLIT": 4})   # the default packs: this too
    jobs = [
        (plain, [[2, 8, 1, 64], [2, 2, 77, 64], [2, 2, 77, 64]], "float32", "gqa_plain", False),
        (plain, [[2, 8, 3, 64], [2, 2, 77, 64], [2, 2, 77, 64]], "float32", "gqa_plain", False),
        (plain, [[1, 6, 5, 32], [1, 1, 40, 32], [1, 1, 40, 32]], "float32", "gqa_plain", False),
        (plain, [[1, 4, 3, 32], [1, 2, 40, 32], [1, 2, 40, 32]], "float32", "gqa_plain", True),
        (split, [[2, 8, 1, 64], [2, 2, 300, 64], [2, 2, 300, 64]], "float32", "gqa_plain", False),
        (split, [[1, 6, 5, 32], [1, 1, 77, 32], [1, 1, 77, 32]], "float32", "gqa_plain", False),
        (bf16, [[1, 32, 1, 128], [1, 8, 300, 128], [1, 8, 300, 128]], "bfloat16", "gqa_plain", False),
        (tma, [[2, 8, 3, 64], [2, 2, 77, 64], [2, 2, 77, 64]], "float32", "gqa_plain", False),
        (unpacked, [[2, 8, 3, 64], [2, 2, 300, 64], [2, 2, 300, 64]], "float32", "gqa_plain", False),
    ]
    results = _run(jobs)
    for job, r in zip(jobs, results):
        assert r["same_nan"] and (r["nan"] > 0) == job[4], (job[1], r)
        if not job[4]:
            assert r["err"] < TOL[job[2]], (job[1], r)


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.parametrize("path, knobs, dtype", [(GQA_DECODE, SMALL, None), (GQA_MASK, SMALL | {"SPLIT": 2}, None),
                                                (GQA_DECODE, SMALL | {"SPLIT": 2}, "bf16")],
                         ids=["decode", "mask_split", "decode_split_bf16"])
def test_packed_modules_pass_the_referee(path, knobs, dtype, tmp_path):
    """The referee's whole protocol (variants, draws, special values, edges, poisoned outputs, a second run)."""
    verify(path, make_module(path, {"attention": knobs}, dtype), tmp_path, dtype, edges=True)


# --- compile: a Llama decode step ----------------------------------------------------------------------------

@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMPILE))
def test_packed_kernels_cross_compile_at_a_llama_decode_step(name, tmp_path):
    """Batch 1 and 32 (32 query heads on 8 KV heads, Lk 4096, D 128, bf16) at each target's packed decode seeds:
    every kernel builds within the target's limits, no spills, matrix instructions in the flash kernels."""
    from kerntailor.builder import BuildCache, BuildPool
    from kerntailor.generate.kernels import kernel_source

    arch, target = COMPILE[name], get_target(name)
    modules, gens = [], []
    for path, bh in ((LLAMA_B1, 32), (LLAMA_B32, 1024)):
        _, _, gen, _ = prepared(path, "bf16")
        for seed in seed_knobs("attention", target, dtype="bf16", **(DECODE | {"BH": bh, "G": 4})):
            if seed.get("PACK"):
                modules.append(make_module(path, {"attention": seed}, "bf16", arch))
                gens.append(gen)
    assert len(modules) == (3 if name == "h100" else 4)   # MI300X: 256 packed programs at batch 32 < 304 CUs: split too
    launches = [(k, m, g) for m, g in zip(modules, gens) for k in m.kernels[0].launches]
    sources = [kernel_source(m.source, k, g) for k, m, g in launches]
    with BuildPool(None, timeout_s=600) as pool:
        results = pool.build(sources, [target], cache=BuildCache(tmp_path / "cache"))
    facts = [(k.kernel_name, (r.facts.registers, r.facts.spills, r.facts.lds_bytes))
             for (k, _, _), r in zip(launches, results)]
    for (k, m, _), r in zip(launches, results):
        assert r.ok and not r.rejected_reason, f"{k.kernel_name} on {name}: {r.error or r.rejected_reason}"
        assert r.facts.spills == 0, facts
        if k is m.kernels[0].launches[0]:   # the flash kernel (the partials where split): its products on the MMA units
            assert r.facts.matrix_instr_count > 0, facts
    print(facts)
