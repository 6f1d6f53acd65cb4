"""Typed schedules (codegen/schedule.py and each family's type): made and validated where they are chosen, read
by codegen as they are; the search space turns its Configs into them and back."""

from __future__ import annotations

import dataclasses

import pytest

from kerntailor.codegen import FAMILIES, Schedule, ScheduleError
from kerntailor.codegen.fused import PointwiseSchedule, ReductionSchedule
from kerntailor.codegen.gemm import MatmulSchedule
from kerntailor.codegen.pool import PoolSchedule
from kerntailor.codegen.scan import ScanSchedule
from kerntailor.search import Config, make_space
from kerntailor.search.families import space_family
from kerntailor.targets import get_target

MI300X, H200 = get_target("mi300x"), get_target("h200")


def test_every_family_has_a_schedule_type_with_its_name():
    for name, fam in FAMILIES.items():
        assert issubclass(fam.schedule, Schedule) and fam.schedule.family == name
        fields = {f.name for f in dataclasses.fields(fam.schedule)}
        assert set(fam.schedule.order) == fields, name          # every knob has a place in the header
        assert set(fam.schedule.shown) <= fields


@pytest.mark.parametrize("make, match", [
    (lambda: PointwiseSchedule(XBLOCK=1000), "XBLOCK=1000 is not a power of two"),
    (lambda: PointwiseSchedule(num_warps=3), "num_warps=3 is not a power of two"),
    (lambda: PointwiseSchedule(num_stages=0), r"num_stages=0 \(at least 1\)"),
    (lambda: PointwiseSchedule(waves_per_eu=-1), r"waves_per_eu=-1 \(at least 0\)"),
    (lambda: PointwiseSchedule(tiles=1), "tiles=1; expected one of True, False"),
    (lambda: ReductionSchedule(XBLOCK=1, RBLOCK=96, persistent=False), "RBLOCK=96 is not a power of two"),
    (lambda: ReductionSchedule(XBLOCK=1, RBLOCK=64, persistent=False, SPLIT=100), "SPLIT=100"),
    (lambda: ReductionSchedule(XBLOCK=1, RBLOCK=64, persistent="yes"), "persistent='yes'"),
    (lambda: ScanSchedule(XBLOCK=2, RBLOCK=48), "RBLOCK=48"),
    (lambda: PoolSchedule(XBLOCK=0), "XBLOCK=0 is not a power of two"),
    (lambda: PoolSchedule(XBLOCK=128, ROWS=3), "ROWS=3; expected one of 1, 2, 4, 8"),
    (lambda: MatmulSchedule(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=0), r"GROUP_M=0 \(at least 1\)"),
    (lambda: MatmulSchedule(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, kpack=3), "kpack=3"),
    (lambda: MatmulSchedule(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4.0), "num_warps=4.0 is not an integer"),
    (lambda: MatmulSchedule.from_knobs({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "BLOCK": 8}),
     "matmul schedule has no knob BLOCK"),
])
def test_a_bad_knob_fails_where_the_schedule_is_made(make, match):
    with pytest.raises(ScheduleError, match=match):
        make()


def test_knobs_list_the_shown_ones_and_what_differs_from_the_default():
    s = MatmulSchedule(BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=8)
    assert s.knobs() == {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8,
                         "num_stages": 2, "split_k": 1, "precision": "ieee"}
    assert list(dataclasses.replace(s, TMA=1, waves_per_eu=0).knobs())[-2:] == ["waves_per_eu", "TMA"]
    assert ReductionSchedule(XBLOCK=1, RBLOCK=2048, SPLIT=512, persistent=False, num_warps=8).knobs() == \
        {"XBLOCK": 1, "RBLOCK": 2048, "SPLIT": 512, "persistent": False, "num_warps": 8}
    assert PointwiseSchedule(tiles=False).knobs() == {"XBLOCK": 1024, "num_warps": 4, "tiles": False}


def test_options_are_the_compile_options_in_a_fixed_order():
    s = MatmulSchedule(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, kpack=2, matrix_instr_nonkdim=16, waves_per_eu=0)
    assert s.options() == (("num_warps", 4), ("num_stages", 2), ("waves_per_eu", 0), ("matrix_instr_nonkdim", 16),
                           ("kpack", 2))
    assert PoolSchedule(XBLOCK=256).options() == (("num_warps", 4), ("num_stages", 1))


def test_retune_keeps_what_the_search_does_not_tune():
    fp8 = MatmulSchedule(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, precision="fp8-row")
    assert fp8.retune({"BLOCK_K": 64, "TMA": 1}) == dataclasses.replace(fp8, BLOCK_K=64, TMA=1)
    split = ReductionSchedule(XBLOCK=1, RBLOCK=2048, SPLIT=512, persistent=False)
    tuned = split.retune({"XBLOCK": 1, "RBLOCK": 4096, "persistent": True, "num_warps": 4, "num_stages": 1})
    assert (tuned.SPLIT, tuned.RBLOCK, tuned.persistent) == (512, 4096, False)   # a split's chunks are looped
    plain = ReductionSchedule(XBLOCK=1, RBLOCK=2048, persistent=False)
    assert plain.retune({"RBLOCK": 4096, "persistent": True}).persistent is True


def test_a_schedule_answers_what_the_pipeline_asks_by_its_type():
    """The pipeline asks every schedule whether its rows are split and whether its product is the library's,
    whatever its family (no probing for SPLIT or LIBRARY by name)."""
    split = ReductionSchedule(XBLOCK=1, RBLOCK=2048, SPLIT=512, persistent=False)
    assert split.row_split == 512 and ReductionSchedule(XBLOCK=1, RBLOCK=64, persistent=True).row_split == 0
    library = MatmulSchedule(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, LIBRARY=1)
    assert library.library_product and not dataclasses.replace(library, LIBRARY=0).library_product
    for s in (PointwiseSchedule(), ScanSchedule(XBLOCK=1, RBLOCK=64), PoolSchedule(XBLOCK=128), library):
        assert s.row_split == 0
    assert not any(s.library_product for s in (PointwiseSchedule(), split, PoolSchedule(XBLOCK=128)))
    assert split.knob_values()["SPLIT"] == 512 and set(split.knob_values()) == set(ReductionSchedule.order)


@pytest.mark.parametrize("family, sizes, base", [
    ("pointwise", {"numel": 1 << 20}, PointwiseSchedule(XBLOCK=1024)),
    ("reduction", {"R": 4096, "X": 512}, ReductionSchedule(XBLOCK=1, RBLOCK=4096, persistent=True, num_warps=16)),
    ("matmul", {"M": 4096, "N": 4096, "K": 4096}, MatmulSchedule(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8,
                                                                 num_warps=8, precision="tf32x3")),
    ("scan", {"R": 4096, "X": 64}, ScanSchedule(XBLOCK=1, RBLOCK=2048, num_warps=4)),
    ("pool", {"numel": 1 << 20}, PoolSchedule(XBLOCK=1024)),
    ("pool", {"numel": 1 << 20, "window": 16, "KW": 4, "KH": 4, "SH": 1, "DH": 1, "OH": 511},
     PoolSchedule(XBLOCK=512, ROWS=4)),
    ("pool", {"numel": 1 << 20, "window": 16, "KW": 4, "KH": 4, "SH": 1, "DH": 1, "OH": 511, "SW": 1, "PW": 1,
              "OW": 511}, PoolSchedule(XBLOCK=1024, SPAN=1)),
])
@pytest.mark.parametrize("target", [MI300X, H200], ids=["mi300x", "h200"])
def test_the_space_makes_schedules_of_every_config_and_back(family, sizes, base, target):
    space = make_space(family, target, **sizes)
    assert space.family == family
    seed = space.config_of(base)
    assert not space.violations(seed), space.violations(seed)
    assert space.schedule(seed, base) == base if target is H200 else space.schedule(seed, base).waves_per_eu == 0
    for config in space.enumerate()[:: max(1, space.size // 50)]:
        schedule = space.schedule(config, base)
        assert type(schedule) is type(base)
        assert all(getattr(schedule, name) == value for name, value in config.knobs)
        assert space.config_of(schedule) == config
    if family == "matmul":
        assert space.schedule(seed, base).precision == "tf32x3"   # the policy is not a knob: it stays


def test_the_pool_space_offers_sliding_rows_where_output_rows_share_input_rows():
    """ROWS > 1 only where the window along the rows is longer than its stride, up to the output rows there, and
    while the rows' loads stay within what codegen unrolls (codegen/pool.py refuses more)."""
    def rows(**sizes):
        return make_space("pool", H200, **({"numel": 1 << 20, "window": 16, "KW": 4, "KH": 4, "SH": 1, "DH": 1,
                                             "OH": 511} | sizes)).knob("ROWS").values

    assert rows() == (1, 2, 4, 8)
    assert rows(SH=4) == (1,) and rows(KH=1, window=4) == (1,)       # no shared rows; a 1-d pool's single row
    assert rows(SH=2, DH=2) == (1, 2, 4, 8)                           # dilated rows overlap too
    assert rows(OH=3) == (1, 2, 4)
    assert rows(KW=17, KH=3, window=51) == (1, 2, 4)                  # 8 rows: 10 input rows x 17 loads
    assert make_space("pool", H200, numel=1 << 20).knob("ROWS").values == (1,)   # sizes that say no window


def test_the_pool_space_offers_the_span_schedule_where_outputs_share_inputs_along_the_last_axis():
    """SPAN=1 where the last axis's window is longer than its stride, the stride divides a 16-byte chunk, the row
    has a lane group's outputs and no prologue computes the window; never with ROWS > 1, nor with fewer lane groups
    than 64 per warp. The cost model counts its shared chunk loads: fewer lane-ops than the window of loads."""
    kb41 = {"numel": 1 << 20, "window": 8, "KW": 8, "SW": 1, "DW": 3, "PW": 4, "OW": 65523, "ITEM": 4}

    def spans(**sizes):
        return make_space("pool", H200, **(kb41 | sizes)).knob("SPAN").values

    assert spans() == (0, 1) and spans(ITEM=2) == (0, 1) and spans(SW=2, KW=3, DW=1, window=3) == (0, 1)
    assert spans(SW=8, KW=8, DW=1) == (0,)          # no overlap
    assert spans(SW=3, KW=5, DW=1) == (0,)          # a stride that does not divide a chunk
    assert spans(SW=8, KW=9, DW=1, ITEM=2) == (0, 1) and spans(SW=16, KW=17, DW=1, ITEM=2) == (0,)
    assert spans(OW=3) == (0,) and spans(prologue=1) == (0,)
    assert make_space("pool", H200, numel=1 << 20).knob("SPAN").values == (0,)   # sizes that say no window
    space = make_space("pool", H200, **(kb41 | {"KH": 4, "SH": 1, "DH": 1, "OH": 511, "window": 32}))
    configs = space.enumerate()
    assert {(c["SPAN"], c["ROWS"]) for c in configs} == {(0, 1), (0, 2), (0, 4), (0, 8), (1, 1)}
    assert all(c["XBLOCK"] // 4 >= 64 * c["num_warps"] for c in configs if c["SPAN"])
    family, sizes = space_family("pool"), dict(space.sizes)
    window = Config("pool", (("XBLOCK", 1024), ("ROWS", 1), ("SPAN", 0), ("num_warps", 4)))
    span = Config("pool", (("XBLOCK", 1024), ("ROWS", 1), ("SPAN", 1), ("num_warps", 4)))
    assert family.lane_ops(span, sizes) < 0.6 * family.lane_ops(window, sizes)


def test_the_space_refuses_a_config_of_another_family():
    space = make_space("pool", H200, numel=1 << 20)
    with pytest.raises(ValueError, match="a scan config for a pool schedule"):
        space.schedule(Config("scan", (("XBLOCK", 1),)), PoolSchedule(XBLOCK=128))
