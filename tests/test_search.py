"""The search stage: Config, Space and the family spaces per target, the strategies, budgets and ranking.

Unit tier: no GPU, no compiles. Strategies run against a fake measurer, a deterministic function of the
knobs with a known optimum and a region that "crashes".
"""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics

import pytest

from kerntailor.search import (
    EXHAUSTED,
    STOPPED_CANDIDATES,
    STOPPED_TIME,
    STRATEGIES,
    Budget,
    Config,
    Constraint,
    Knob,
    Space,
    Trial,
    gemm_space,
    get_strategy,
    loop_trips,
    make_space,
    padding_factor,
    pointwise_space,
    program_count,
    reduction_space,
)
from kerntailor.search.families import gemm_lds_bytes, seed_knobs
from kerntailor.targets import get_target
from kerntailor.units import next_power_of_two

MI300X, H200, MI355X = get_target("mi300x"), get_target("h200"), get_target("mi355x")
AMD_KNOBS = {"waves_per_eu", "matrix_instr_nonkdim", "kpack"}


# --- Config --------------------------------------------------------------------------------------------------

def test_config_is_frozen_hashable_ordered():
    c = Config("reduction", (("XBLOCK", 1), ("RBLOCK", 4096), ("num_warps", 8), ("num_stages", 1),
                             ("persistent", True), ("waves_per_eu", 2)))
    assert c.get("RBLOCK") == 4096 and c["persistent"] is True and c.get("kpack", None) is None
    assert c.names == ("XBLOCK", "RBLOCK", "num_warps", "num_stages", "persistent", "waves_per_eu")
    assert c == Config("reduction", dict(c.knobs)) and hash(c) == hash(Config("reduction", dict(c.knobs)))
    assert c != Config("reduction", tuple(reversed(c.knobs)))            # order is part of the value
    assert {c: 1}[Config("reduction", c.knobs)] == 1
    with pytest.raises(AttributeError):
        c.family = "matmul"
    with pytest.raises(KeyError):
        c.get("BLOCK_M")


def test_config_replace_key_json():
    c = Config("matmul", (("BLOCK_M", 128), ("BLOCK_N", 64), ("num_warps", 4), ("kpack", 2)))
    d = c.replace(BLOCK_N=128, num_warps=8)
    assert d.names == c.names and d["BLOCK_N"] == 128 and d["num_warps"] == 8 and c["BLOCK_N"] == 64
    with pytest.raises(KeyError):
        c.replace(BLOCK_Z=1)
    assert c.key() == "matmul:BLOCK_M=128,BLOCK_N=64,num_warps=4,kpack=2"
    assert Config.from_json(json.loads(json.dumps(c.to_json()))) == c
    assert Config.from_json(json.dumps(c.to_json())).key() == c.key()
    assert c.options() == {"num_warps": 4, "kpack": 2} and c.constexprs() == {"BLOCK_M": 128, "BLOCK_N": 64}
    with pytest.raises(TypeError):
        Config("matmul", (("BLOCK_M", [128]),))
    with pytest.raises(ValueError):
        Config("matmul", (("BLOCK_M", 1), ("BLOCK_M", 2)))


# --- Space ---------------------------------------------------------------------------------------------------

def _toy_space() -> Space:
    return Space("toy", (Knob("a", (1, 2, 4, 8)), Knob("b", (1, 2, 4, 8)), Knob("c", (False, True))),
                 (Constraint("a*b <= 16", ("a", "b"), lambda v: v["a"] * v["b"] <= 16),
                  Constraint("c only with a >= 4", ("a", "c"), lambda v: not v["c"] or v["a"] >= 4)))


def test_space_enumerates_exactly_the_valid_product():
    s = _toy_space()
    expected = [dict(a=a, b=b, c=c) for a, b, c in itertools.product((1, 2, 4, 8), (1, 2, 4, 8), (False, True))
                if a * b <= 16 and (not c or a >= 4)]
    assert [c.as_dict() for c in s.enumerate()] == expected
    assert s.size == len(expected) == 18 and s.raw_size == 32
    assert all(s.is_valid(c) for c in s)
    bad = s.config(a=8, b=4, c=False)
    assert s.violations(bad) == ["a*b <= 16"] and bad not in s
    assert s.violations(s.config(a=3, b=1, c=False)) == ["a=3 is not one of (1, 2, 4, 8)"]


def test_space_sample_is_valid_and_seeded():
    s = _toy_space()
    draws = [s.sample(random.Random(7)) for _ in range(3)]
    assert draws[0] == draws[1] == draws[2]
    rng = random.Random(1)
    seen = {s.sample(rng) for _ in range(400)}
    assert seen == set(s.enumerate())                                   # uniform enough to hit every one


def test_space_neighbours_move_one_knob_one_step():
    s = _toy_space()
    c = s.config(a=4, b=2, c=True)
    near = s.neighbours(c)
    assert all(s.is_valid(n) for n in near)
    for n in near:
        changed = [k for k in s.names if n[k] != c[k]]
        assert len(changed) == 1
        knob = s.knob(changed[0])
        assert abs(knob.values.index(n[changed[0]]) - knob.values.index(c[changed[0]])) == 1
    assert {n.key() for n in near} == {"toy:a=8,b=2,c=True", "toy:a=4,b=1,c=True", "toy:a=4,b=4,c=True",
                                       "toy:a=4,b=2,c=False"}     # a=2 with c=True is invalid


def test_space_rejects_constraint_on_unknown_knob():
    with pytest.raises(ValueError):
        Space("toy", (Knob("a", (1,)),), (Constraint("x", ("zz",), lambda v: True),))


# --- family spaces per target ------------------------------------------------------------------------------

def test_amd_knobs_only_on_amd_targets():
    for family, sizes in (("pointwise", dict(numel=1 << 20)), ("reduction", dict(R=4096, X=4096)),
                          ("matmul", dict(M=2048, N=2048, K=2048))):
        assert not AMD_KNOBS & set(make_space(family, H200, **sizes).names)
        assert "waves_per_eu" in make_space(family, MI300X, **sizes).names
    assert AMD_KNOBS <= set(gemm_space(MI300X, M=2048, N=2048, K=2048).names)
    assert gemm_space(MI300X, M=2048, N=2048, K=2048).knob("kpack").values == (1, 2)
    assert gemm_space(MI300X, M=2048, N=2048, K=2048).knob("waves_per_eu").values == (0, 1, 2, 4)
    mi355 = gemm_space(MI355X, M=2048, N=2048, K=2048)
    assert mi355.knob("kpack").values == (1,)                            # forced to 1 on gfx950
    assert {c["kpack"] for c in mi355} == {1}
    assert {c["matrix_instr_nonkdim"] for c in mi355} == {16, 32}


@pytest.mark.parametrize("target", [MI300X, H200, MI355X], ids=lambda t: t.name)
def test_gemm_space_respects_threads_lds_registers(target):
    space = gemm_space(target, M=4096, N=4096, K=4096, dtype="fp16")
    assert 1000 < space.size < space.raw_size
    warps = set()
    for c in space:
        threads = c["num_warps"] * target.warp_size
        warps.add(c["num_warps"])
        assert threads <= 1024
        assert gemm_lds_bytes(c.as_dict(), target, "fp16") <= target.lds_per_block
        assert c["BLOCK_M"] * c["BLOCK_N"] <= 128 * threads
        if target.is_amd:
            assert c["matrix_instr_nonkdim"] <= min(c["BLOCK_M"], c["BLOCK_N"])
        if c["split_k"] > 1:                                            # only when tiles cannot fill the CUs
            assert math.ceil(4096 / c["BLOCK_M"]) * math.ceil(4096 / c["BLOCK_N"]) < target.compute_units
    # wave64: 16 warps = 1024 threads is the most on AMD; NVIDIA allows the same 16 (512 threads)
    assert max(warps) == 16


def test_gemm_lds_rule_matches_cross_compiled_facts():
    # triton 3.6.0 cross-compiles of a 128x128x64 fp16 matmul (recorded in search/families.py)
    v = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
    assert [gemm_lds_bytes({**v, "num_stages": s}, MI300X, "fp16") for s in (1, 2, 3)] == [16384, 32768, 65536]
    assert [gemm_lds_bytes({**v, "num_stages": s}, H200, "fp16") for s in (1, 2, 3)] == [32768, 65536, 98304]
    # deep pipelines of big tiles fit H200's 227 KB but not MI300X's 64 KiB
    big = dict(BLOCK_M=256, BLOCK_N=128, BLOCK_K=64, num_stages=3)
    assert gemm_lds_bytes(big, MI300X, "fp16") > MI300X.lds_per_block
    assert gemm_lds_bytes(big, H200, "fp16") <= H200.lds_per_block


def test_gemm_space_prunes_tiles_bigger_than_the_problem():
    space = gemm_space(MI300X, M=40, N=300, K=24, dtype="fp16")
    assert space.knob("BLOCK_M").values == (16, 32, 64)                 # 40 -> 64
    assert space.knob("BLOCK_N").values == (16, 32, 64, 128, 256)
    assert space.knob("BLOCK_K").values == (16, 32)                     # 24 -> 32
    for c in space:
        assert c["split_k"] == 1 or 24 // c["split_k"] >= c["BLOCK_K"]   # one masked step covers K without a split
        if c["GROUP_M"] > 1:                                            # grouping needs a 2-D tile grid
            assert math.ceil(40 / c["BLOCK_M"]) > 1 and math.ceil(300 / c["BLOCK_N"]) > 1


@pytest.mark.parametrize("target", [MI300X, H200], ids=lambda t: t.name)
def test_reduction_space_rules(target):
    R, X = 3000, 50
    space = reduction_space(target, R=R, X=X)
    r_top = next_power_of_two(R)
    assert max(space.knob("RBLOCK").values) == r_top == 4096
    assert max(space.knob("XBLOCK").values) == 64
    persistent = looped = 0
    for c in space:
        threads = c["num_warps"] * target.warp_size
        tile = c["XBLOCK"] * c["RBLOCK"]
        assert threads <= 1024 and tile <= 64 * threads                 # <= 64 fp32 per thread
        assert c["num_warps"] == 1 or tile >= threads
        assert c["persistent"] == (c["RBLOCK"] >= r_top)
        if c["persistent"]:
            persistent += 1
            assert c["num_stages"] == 1
        else:
            looped += 1
    assert persistent and looped
    if target.is_amd:
        assert space.knob("num_stages").values == (1,)
    # a row far too long to hold in registers has no persistent config
    long_rows = reduction_space(target, R=393216, X=4096)
    assert not any(c["persistent"] for c in long_rows)


def test_reduction_space_fp64_halves_the_register_budget():
    fp32 = reduction_space(H200, R=8192, X=8, dtype="fp32")
    fp64 = reduction_space(H200, R=8192, X=8, dtype="fp64")
    assert fp64.size < fp32.size
    assert all(c["XBLOCK"] * c["RBLOCK"] <= 32 * c["num_warps"] * 32 for c in fp64)


def test_pointwise_space_rules():
    small = pointwise_space(MI300X, numel=1000)
    assert max(small.knob("XBLOCK").values) == 1024
    for c in small:
        assert c["XBLOCK"] >= c["num_warps"] * 64 or c["num_warps"] == 1
    h = pointwise_space(H200, numel=1 << 24)
    assert max(h.knob("XBLOCK").values) == 16384 and "waves_per_eu" not in h.names
    assert any(c["num_warps"] == 32 for c in h)                          # 1024 threads on wave32
    assert not any(c["num_warps"] == 32 for c in pointwise_space(MI300X, numel=1 << 24))   # 2048 on wave64
    with pytest.raises(ValueError):
        make_space("recurrent", MI300X, numel=1)   # no space: the library runs it


def test_grid_and_loop_of_a_config():
    sizes = dict(M=1000, N=512, K=4096)
    c = Config("matmul", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=1, num_warps=4, num_stages=2, split_k=2))
    assert program_count(c, sizes) == 8 * 4 * 2
    assert loop_trips(c, sizes) == 32
    assert padding_factor(c, sizes) == pytest.approx(1024 / 1000)
    r = Config("reduction", dict(XBLOCK=4, RBLOCK=1024, num_warps=4, num_stages=1, persistent=False))
    assert program_count(r, dict(R=3000, X=10)) == 3 and loop_trips(r, dict(R=3000, X=10)) == 3
    assert loop_trips(r.replace(RBLOCK=4096, persistent=True), dict(R=3000, X=10)) == 1


# --- strategies ------------------------------------------------------------------------------------------------

GEMM = gemm_space(MI300X, M=4096, N=4096, K=4096, dtype="fp16")
OPTIMUM = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=2, split_k=1,
               waves_per_eu=2, matrix_instr_nonkdim=16, kpack=2)
BEST_S = 1e-3


def fake_seconds(config: Config) -> float | None:
    """A synthetic GEMM timing: smooth in log2 of each knob around OPTIMUM; big tiles on few warps crash."""
    v = config.as_dict()
    if v["BLOCK_M"] * v["BLOCK_N"] >= 256 * 128 and v["num_warps"] <= 4:
        return None
    lg = math.log2
    penalty = (0.15 * (lg(v["BLOCK_M"]) - 7) ** 2 + 0.15 * (lg(v["BLOCK_N"]) - 7) ** 2
               + 0.1 * (lg(v["BLOCK_K"]) - 6) ** 2 + 0.05 * (v["GROUP_M"] != 8) + 0.1 * (lg(v["num_warps"]) - 2) ** 2
               + 0.08 * (v["num_stages"] - 2) ** 2 + 0.3 * (v["split_k"] > 1) + 0.05 * (v["waves_per_eu"] != 2)
               + 0.04 * (v["matrix_instr_nonkdim"] != 16) + 0.02 * (v["kpack"] != 2))
    return BEST_S * (1 + penalty)


class FakeMeasurer:
    def __init__(self):
        self.calls: list[list[Config]] = []

    def __call__(self, configs):
        self.calls.append(list(configs))
        out = []
        for c in configs:
            s = fake_seconds(c)
            out.append(Trial(c, True, s) if s is not None else Trial.failed(c, "crash: spilled past scratch"))
        return out


def test_fake_optimum_is_in_the_space():
    assert GEMM.is_valid(GEMM.config(**OPTIMUM))
    assert fake_seconds(GEMM.config(**OPTIMUM)) == BEST_S
    assert GEMM.size > 20_000


def test_registry():
    assert set(STRATEGIES) == {"exhaustive", "random", "evolutionary"}
    assert get_strategy("evolutionary", seed=3, population=8).population == 8
    with pytest.raises(ValueError):
        get_strategy("annealing")


def test_exhaustive_visits_every_config_once():
    space = _toy_space()
    measure = FakeToy()
    result = get_strategy("exhaustive", batch_size=5).run(space, measure, Budget())
    assert [t.config for t in result.trials] == list(space.enumerate())
    assert len(set(t.config for t in result.trials)) == space.size
    assert result.stopped_by == EXHAUSTED
    assert [len(b) for b in measure.calls] == [5, 5, 5, 3]
    assert result.best.config == space.config(a=1, b=1, c=False)


class FakeToy:
    """a + b, c costs 0.5; a=8 crashes."""

    def __init__(self):
        self.calls = []

    def __call__(self, configs):
        self.calls.append(list(configs))
        return [Trial.failed(c, "hang") if c["a"] == 8 else Trial(c, True, c["a"] + c["b"] + 0.5 * c["c"])
                for c in configs]


@pytest.mark.parametrize("name", ["random", "evolutionary"])
def test_seeded_strategies_are_deterministic(name):
    runs = [get_strategy(name, seed=s).run(GEMM, FakeMeasurer(), Budget(max_candidates=60)) for s in (5, 5, 6)]
    keys = [[t.config.key() for t in r.trials] for r in runs]
    assert keys[0] == keys[1] and keys[0] != keys[2]
    assert len(set(keys[0])) == 60                                       # never times a config twice


@pytest.mark.parametrize("name", ["random", "evolutionary"])
def test_strategies_exhaust_a_small_space(name):
    space = _toy_space()
    result = get_strategy(name, seed=0).run(space, FakeToy(), Budget(max_candidates=1000))
    assert result.stopped_by == EXHAUSTED
    assert sorted(t.config.key() for t in result.trials) == sorted(c.key() for c in space)


def test_evolutionary_finds_the_optimum_and_beats_random():
    budget = Budget(max_candidates=200)                                  # < 1 % of the space
    evo, rnd = [], []
    for seed in range(5):
        e = get_strategy("evolutionary", seed=seed).run(GEMM, FakeMeasurer(), budget)
        r = get_strategy("random", seed=seed).run(GEMM, FakeMeasurer(), budget)
        assert e.stopped_by == r.stopped_by == STOPPED_CANDIDATES
        assert e.evaluated == r.evaluated == 200
        assert e.best.value <= 1.05 * BEST_S, f"seed {seed}: {e.best.config.key()} {e.best.value}"
        evo.append(e.best.value)
        rnd.append(r.best.value)
    assert statistics.mean(evo) < statistics.mean(rnd)


def test_candidate_budget_stops_exactly_mid_batch():
    measure = FakeMeasurer()
    result = get_strategy("random", seed=1, batch_size=8).run(GEMM, measure, Budget(max_candidates=37))
    assert result.evaluated == 37 and result.stopped_by == STOPPED_CANDIDATES
    assert [len(b) for b in measure.calls] == [8, 8, 8, 8, 5]
    zero = get_strategy("exhaustive").run(GEMM, measure, Budget(max_candidates=0))
    assert zero.evaluated == 0 and zero.best is None and zero.stopped_by == STOPPED_CANDIDATES


def test_time_budget_uses_the_injected_clock():
    now = [100.0]

    def evaluate(configs):
        now[0] += 1.0                                                    # each batch takes one "second"
        return FakeMeasurer()(configs)

    budget = Budget(max_seconds=5.0, clock=lambda: now[0])
    result = get_strategy("evolutionary", seed=0, population=4, batch_size=4).run(GEMM, evaluate, budget)
    assert result.stopped_by == STOPPED_TIME
    assert result.evaluated == 5 * 4 and result.seconds == pytest.approx(5.0)


def test_failures_are_recorded_and_the_search_goes_on():
    result = get_strategy("random", seed=2).run(GEMM, FakeMeasurer(), Budget(max_candidates=150))
    failed = result.failures
    assert failed and all(t.error.startswith("crash") and t.value is None for t in failed)
    assert result.evaluated == 150 and result.best.ok
    assert result.best.value == min(t.value for t in result.trials if t.ok)


def test_an_evaluator_that_raises_becomes_failed_trials():
    calls = []

    def flaky(configs):
        calls.append(len(configs))
        if len(calls) == 2:
            raise RuntimeError("worker died\nlong traceback")
        return FakeMeasurer()(configs)

    result = get_strategy("random", seed=0, batch_size=4).run(GEMM, flaky, Budget(max_candidates=12))
    assert result.evaluated == 12 and len(calls) == 3
    assert [t.error for t in result.trials[4:8]] == ["evaluate raised RuntimeError: worker died"] * 4


def test_all_failures_leave_no_best():
    def crash(configs):
        return [Trial.failed(c, "wrong values") for c in configs]

    result = get_strategy("evolutionary", seed=0).run(GEMM, crash, Budget(max_candidates=40))
    assert result.best is None and result.evaluated == 40 and len(result.failures) == 40


def test_trial_validation():
    c = GEMM.config(**OPTIMUM)
    with pytest.raises(ValueError):
        Trial(c, True, None)
    with pytest.raises(ValueError):
        Trial(c, True, math.inf)
    assert Trial.failed(c, "").error == "failed"


def test_rank_hook_times_only_the_top_k():
    oracle_calls = []

    def oracle(configs):                                                 # a perfect cost model
        oracle_calls.append(len(configs))
        return sorted(configs, key=lambda c: fake_seconds(c) or math.inf)

    measure = FakeMeasurer()
    result = get_strategy("random", seed=0, batch_size=4, pool_factor=8).run(
        GEMM, measure, Budget(max_candidates=40), rank=oracle)
    assert set(oracle_calls) == {32} and all(len(b) == 4 for b in measure.calls)
    plain = get_strategy("random", seed=0, batch_size=4, pool_factor=8).run(GEMM, FakeMeasurer(),
                                                                            Budget(max_candidates=40))
    assert result.best.value < plain.best.value
    # exhaustive with a ranker times the predicted best first, and a ranker may drop configs
    space = _toy_space()
    ex = get_strategy("exhaustive").run(space, FakeToy(), Budget(max_candidates=1),
                                        rank=lambda cs: sorted(cs, key=lambda c: (-c["a"], -c["b"], -c["c"]))[:3])
    assert ex.trials[0].config == space.config(a=8, b=2, c=True)
    ex_all = get_strategy("exhaustive").run(space, FakeToy(), Budget(), rank=lambda cs: cs[:3])
    assert ex_all.evaluated == 3 and ex_all.stopped_by == EXHAUSTED


def test_rank_hook_may_not_invent_configs():
    other = _toy_space().config(a=1, b=1, c=False)
    with pytest.raises(ValueError, match="not given"):
        get_strategy("random", seed=0).run(GEMM, FakeMeasurer(), Budget(max_candidates=8), rank=lambda cs: [other])


def test_progress_callback_sees_every_batch():
    events = []
    space = _toy_space()
    space.enumerate()
    result = get_strategy("exhaustive", batch_size=4).run(space, FakeToy(), Budget(max_candidates=10),
                                                          progress=events.append)
    assert [e.done for e in events] == [4, 8, 10]
    assert all(e.total == 10 for e in events)
    assert sum(len(e.batch) for e in events) == result.evaluated
    assert events[-1].best == result.best
    assert events[-1].failed == len(result.failures)


# --- known-good seeds ------------------------------------------------------------------------------------

@pytest.mark.parametrize("target,shape", [
    ("h200", dict(M=4096, N=14336, K=4096)), ("h100", dict(M=8192, N=8192, K=8192)),
    ("h200", dict(M=32768, N=64, K=4096)), ("mi300x", dict(M=4096, N=14336, K=4096)),
    ("mi355x", dict(M=4096, N=4096, K=4096)), ("mi250x", dict(M=4096, N=4096, K=4096)),
    ("h200", dict(M=28672, N=1, K=8192)), ("h200", dict(M=1, N=4096, K=4096)),
])
@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_gemm_seeds_are_valid_points_of_the_space(target, shape, dtype):
    t = get_target(target)
    space = gemm_space(t, dtype=dtype, **shape)
    seeds = seed_knobs("matmul", t, dtype=dtype, **shape)
    if dtype == "fp32" and not (t.arch == "sm_90" and (shape["N"] > 64 or 1 in (shape["M"], shape["N"]))):
        assert seeds == []   # fp32: measured on sm_90 only (GEMV, and tf32x3 at N > 64)
        return
    assert seeds, f"no known-good schedule for a {dtype} GEMM on {target}"
    names = {k.name for k in space.knobs}
    for seed in seeds:
        assert set(seed) <= names, f"{set(seed) - names} are not knobs of the gemm space"
        config = Config("matmul", tuple((k.name, seed.get(k.name, k.values[0])) for k in space.knobs))
        assert not space.violations(config), (seed, space.violations(config))
    if t.arch == "gfx950":
        assert all(s["kpack"] == 1 for s in seeds)   # the compiler forces it there
    if shape["N"] <= 64:
        assert all(s["BLOCK_N"] <= 64 for s in seeds)


def test_gemm_seeds_only_where_they_were_measured_or_documented():
    # fp32 skinny: no evidence
    assert seed_knobs("matmul", get_target("h200"), dtype="fp32", M=32768, N=64, K=4096) == []
    fp32 = seed_knobs("matmul", get_target("h200"), dtype="fp32", M=4096, N=14336, K=4096)          # tf32x3_probe.py
    assert fp32[0] == {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "split_k": 1, "num_warps": 8,
                       "num_stages": 3, "TMA": 1, "PERSISTENT": 1}
    assert seed_knobs("matmul", get_target("mi300x"), dtype="fp32", M=4096, N=4096, K=4096) == []
    assert seed_knobs("matmul", get_target("a100"), dtype="bf16", M=4096, N=4096, K=4096) == []   # sm_80: none measured
    assert seed_knobs("reduction", get_target("h200"), R=4096, X=4096) == []


def test_tma_and_persistent_knobs_only_on_hopper_and_never_with_split_k():
    hopper = gemm_space(get_target("h200"), M=4096, N=4096, K=4096, dtype="bf16")
    assert {"TMA", "PERSISTENT"} <= {k.name for k in hopper.knobs}
    for name in ("mi300x", "a100"):
        assert not {"TMA", "PERSISTENT"} & {k.name for k in gemm_space(get_target(name), M=4096, N=4096, K=4096).knobs}
    base = {k.name: k.values[0] for k in hopper.knobs} | {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}
    for knob in ("TMA", "PERSISTENT"):
        split = Config("matmul", tuple((k.name, (base | {knob: 1, "split_k": 2})[k.name]) for k in hopper.knobs))
        assert any("split_k" in v for v in hopper.violations(split))


@pytest.mark.unit
def test_short_rows_take_up_to_a_1k_tile_of_rows():
    """Contiguous rows shorter than 16 elements may take up to 1024 // R rows a program (the H100 measured rows of 2
    at 256 rows a program twice as fast as at 64); longer rows keep the 64-row bound; the default fills the tile."""
    from kerntailor.search.families import short_rows_top

    assert [short_rows_top(r) for r in (1, 2, 8, 16, 64, 4096)] == [1024, 512, 128, 64, 64, 64]
    h200 = get_target("h200")
    for R, top in ((2, 512), (16, 64)):
        xblocks = next(k.values for k in reduction_space(h200, R=R, X=1 << 24).knobs if k.name == "XBLOCK")
        assert max(xblocks) == top
    from kerntailor.codegen.fused import short_rows_xblock

    assert short_rows_xblock(1 << 24, 2) == 512 and short_rows_xblock(1 << 24, 16) == 64
    assert short_rows_xblock(3, 2) == 4 and short_rows_xblock(1 << 20, 1024) == 1
