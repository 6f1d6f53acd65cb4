"""The phase form of a strided transposed convolution tiles each line (one phase's o' along the last axis, of one
(n, o'_1..o'_{d-1})) on its own (codegen/conv_phases.py), so a BLOCK_M past the line's rows computes nothing. The
default schedule always capped BLOCK_M there; the search's seeds did not: KernelBench level-2 15 (ConvTranspose3d
at stride 2, 63 outputs a line: 32 per phase) searched 128 rows (3/4 of every tile idle, priced as if full) and
under the interpreter its referee ran past 300 s on the derived variant's 8-row lines. Unit tier: work_sizes
gives the line (L), the space refuses a phase-form tile wider than L's power of two, every seed lies in the space,
and the cost model's programs and padding count the idle rows."""

from __future__ import annotations

from pathlib import Path

from helpers import prepared
from kerntailor.codegen import default_schedule
from kerntailor.generate.kernels import group_work
from kerntailor.search.families import make_space, padding_factor, program_count, seed_knobs
from kerntailor.targets import get_target

SHORT = Path(__file__).parent / "data" / "conv" / "convt3d_stride2_short_lines.py"


def _sizes():
    _, _, gen, plan = prepared(SHORT)
    (group,) = [g for g in plan.groups if g.family == "conv"]
    return gen, group, group_work(gen, group, "fp32")[1]


def test_the_phase_forms_line_is_a_work_size_and_the_space_keeps_its_tiles_within_it():
    gen, group, sizes = _sizes()
    assert sizes["phases"] == 2 and sizes["L"] == 9   # (9 - 1)·2 - 2 + 3 = 17 outputs: 9 of phase 0, 8 of phase 1
    default = default_schedule(gen, group)
    assert default.phases and default.BLOCK_M == 16
    for target in ("mi300x", "h200"):
        t = get_target(target)
        big = sizes | {"M": 1 << 20, "N": 64, "K": 512}   # a layer wide enough for the seeds' 128-row tiles
        space = make_space("conv", t, dtype="fp32", **big)
        assert not space.violations(space.config_of(default))
        assert space.violations(space.config_of(default.retune({"BLOCK_M": 32})))
        assert not space.violations(space.config_of(default.retune({"BLOCK_M": 128, "phases": False})))
        seeds = seed_knobs("conv", t, dtype="fp32", **big)
        assert {s["phases"] for s in seeds} == {True, False}
        assert all(s["BLOCK_M"] <= 16 for s in seeds if s["phases"])
        assert all(not space.violations(space.config_of(default.retune(k))) for k in seeds)


def test_the_cost_model_counts_the_rows_a_line_leaves_idle():
    gen, group, sizes = _sizes()
    big = sizes | {"M": 2 * 8 * 17 * 17 * 17, "L": 32}   # lines of 32 rows (KernelBench 15's: 63 outputs at stride 2)
    space = make_space("conv", get_target("mi300x"), dtype="fp32", **big | {"L": 1 << 10})   # no cap: compare
    schedule = default_schedule(gen, group)
    wide, fit = (space.config_of(schedule.retune({"BLOCK_M": m})) for m in (128, 32))
    assert padding_factor(wide, big) >= 3.9 * padding_factor(fit, big)      # 128 rows on a 32-row line: 4x the work
    assert program_count(wide, big) == program_count(fit, big)              # and no fewer programs
    gather = space.config_of(schedule.retune({"BLOCK_M": 128, "phases": False}))
    assert padding_factor(gather, big) == padding_factor(gather, big | {"L": 5})   # the gather form spans lines
