"""The looped (non-split) Welford reduction (codegen/fused/reductions.py, class Welford; issue #18): per-lane
(mean, M2) accumulated over a row's chunks, then combined over the lanes with Chan's formula, the row's count the
row value rnumel.

- interpreter: the referee passes GroupNorm (per-channel affine inside the row) and BatchNorm3d in training mode
  (rows strided across the tensor) under looped schedules whose odd variants leave the last chunk partial and a
  program's last rows past the end (LayerNorm's and KernelBench GroupNorm's looped schedules: test_codegen_fused.py).
- unit: the row's count is the row value, not a tile of the lanes' counts summed; the search space leaves out the
  looped tiles whose accumulators outgrow a thread's registers.
- compile: GroupNorm's looped kernel at schedules the search offers for KernelBench's 35_GroupNorm_ (896 rows of
  2.1M) cross-compiles for sm_90 and gfx942 without spills (registers printed with -s).
"""

from __future__ import annotations

import pytest

from helpers import DATA, L1, make_module, prepared, verify

FUSED = DATA / "codegen_fused"


def looped(xblock: int, rblock: int, num_warps: int = 4) -> dict:
    return {"reduction": {"XBLOCK": xblock, "RBLOCK": rblock, "persistent": False, "num_warps": num_warps,
                          "SPLIT": 0}}


@pytest.mark.interpreter
@pytest.mark.parametrize("name, xblock, rblock", [
    ("tiny_groupnorm_few.py", 4, 128),       # odd: 6 rows of 3·13·17 = 663 (5 chunks and 23); 2 rows past the end
    ("tiny_batchnorm3d_train.py", 2, 256),   # a strided row; odd: 5 channels of 3·3·7·11 = 693 (2 chunks and 181)
])
def test_looped_welford_passes_the_referee(name, xblock, rblock, tmp_path):
    path = FUSED / name
    module = make_module(path, looped(xblock, rblock))
    (kernel,) = module.kernels
    assert "Welford" in kernel.source and "for roffset" in kernel.source
    verify(path, module, tmp_path)


def test_looped_welford_count_is_the_row_length():
    """No (XBLOCK, RBLOCK) tile of counts summed: a tile no load anchors, which Triton (3.6) may lay out as the
    (XBLOCK, 1) row values, every lane in every thread (splitrows._welford_chunk)."""
    source = make_module(FUSED / "tiny_layernorm.py", looped(1, 64)).kernels[0].source
    assert "cnt_sum0 = (rlen) + tl.zeros([XBLOCK, 1], tl.float32)" in source
    assert "tl.zeros([XBLOCK, RBLOCK], tl.float32), axis=1" not in source


@pytest.mark.parametrize("target_name, spilled, fit", [
    ("h200", [(65536, 32), (32768, 32), (65536, 16), (32768, 16)], [(16384, 16), (16384, 32), (4096, 8)]),
    ("mi300x", [(65536, 16)], [(32768, 16), (16384, 8), (4096, 8)]),
])
def test_space_leaves_out_looped_tiles_that_spill(target_name, spilled, fit):
    """35_GroupNorm_'s rows (896 of 2.1M): the looped tiles that spilled cross-compiled (the comment at SCHEDULES
    below) are not offered; those that fit are."""
    from kerntailor.search.families import reduction_space
    from kerntailor.targets import get_target

    target = get_target(target_name)
    space = reduction_space(target, R=64 // 8 * 512 * 512, X=112 * 8)
    amd = {"waves_per_eu": 0} if target.is_amd else {}
    unsplit = {n: 0 for n in ("SPLIT", "WAVE") if n in space.names}   # these rows may also be split (windowed)
    def config(rblock, warps):
        return space.config(XBLOCK=1, RBLOCK=rblock, num_warps=warps, num_stages=1, persistent=False, **amd,
                            **unsplit)
    assert all(space.violations(config(r, w)) for r, w in spilled)
    assert not any(space.violations(config(r, w)) for r, w in fit)


# GroupNorm's looped schedules that fit a thread's registers: two accumulators of RBLOCK / threads values each, and
# the loaded tile (about 3 x 32 + 16 registers at 32 values per thread). At 64 values per thread they do not, whatever
# the count: RBLOCK 65536 on 32 warps (the search's pick for 35_GroupNorm_ on the H200, 13.1 ms against
# torch.compile's 5.4 ms) spills 3.2 KB on sm_90, where 1_024 threads get 64 registers each and the accumulators
# alone are 128 (3.6 KB before the row's count became a row value); on 16 warps 9.8 KB on sm_90 and 336 B on gfx942.
# 32768 on 32 warps spills 744 B on sm_90 (32 values, 64 registers); on gfx942 a program has at most 16 waves.
SCHEDULES = [(4096, 8, ("h200", "mi300x")), (16384, 16, ("h200", "mi300x")), (32768, 16, ("mi300x",))]


@pytest.mark.compile
@pytest.mark.parametrize("rblock, num_warps, targets", SCHEDULES, ids=[f"{r}x{w}" for r, w, _ in SCHEDULES])
def test_looped_groupnorm_cross_compiles_without_spills(rblock, num_warps, targets, tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path = L1 / "groupnorm.py"
    gen = prepared(path)[2]
    module = make_module(path, looped(1, rblock, num_warps))
    sources = [kernel_source(module.source, k, gen) for k in module.kernels[0].launches]
    results = build_many(sources, [get_target(t) for t in targets], cache_dir=tmp_path / "build-cache")
    assert len(results) == len(targets)
    for r in results:
        assert r.ok, f"{r.target}: {r.error}"
        print(f"groupnorm RBLOCK {rblock}, {num_warps} warps, {r.target}: registers {r.facts.registers}, "
              f"spills {r.facts.spills}, scratch {r.facts.scratch_bytes}")
        assert r.facts.spills == 0 and r.facts.scratch_bytes == 0, (r.target, r.facts)
