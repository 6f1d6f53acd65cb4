"""A looped reduction's long-row split (codegen/kernel.py's LongRowSplit; codegen/fused/__init__.py's _long_rows):
kernel.py launches the group's split-row kernels instead of the looped one on a call of few row blocks and rows
longer than both LONG_ROWS_MIN and the traced row; at the traced sizes the search's own schedule always runs.

- unit: which schedules get a split, the host's condition, the kernels kernel.py defines and launches;
- interpreter: with the split's thresholds lowered (so the referee's own variants take it), the referee passes
  Welford partials over a strided row (training BatchNorm), GroupNorm, softmax and a strided sum;
- compile: the split's kernels, at the schedule it ships with, cross-compile for gfx942 and sm_90 without spills.
"""

from __future__ import annotations

import re

import pytest

import kerntailor.codegen.fused as fused
from helpers import DATA, L1, make_module, prepared, verify
from kerntailor.codegen.fused import LONG_ROWS_MIN, LONG_ROWS_PROGRAMS, ReductionSchedule

FUSED = DATA / "codegen_fused"
LOOPED = {"XBLOCK": 1, "RBLOCK": 64, "persistent": False, "num_warps": 4}


def looped_module(name: str, **knobs):
    return make_module(FUSED / name, {"reduction": LOOPED | knobs})


def test_a_looped_reduction_carries_its_long_row_split():
    module = looped_module("tiny_batchnorm3d_train.py")
    (kernel,) = module.kernels
    split = kernel.long_rows
    assert split is not None
    assert [k.kernel_name for k in split.kernel.launches] == ["k0_reduction_split_partials_kernel",
                                                            "k0_reduction_split_kernel"]
    assert [k.kernel_name for k in kernel.every_kernel] == ["k0_reduction_kernel",
                                                           "k0_reduction_split_partials_kernel",
                                                           "k0_reduction_split_kernel"]
    assert split.programs == LONG_ROWS_PROGRAMS and split.xblock == 1
    traced = 2 * 6 * 10 * 12   # the file's default sizes: the row is N x D x H x W
    assert split.min_row == max(LONG_ROWS_MIN, traced) == LONG_ROWS_MIN
    # the host launches one or the other, decided per call; every kernel is defined once
    src = module.source
    for name in ("k0_reduction_kernel", "k0_reduction_split_partials_kernel", "k0_reduction_split_kernel"):
        assert src.count(f"def {name}(") == 1
        assert src.count(f"{name}[") == 1
    branch = re.search(r"\n(\s*)if triton\.cdiv\((.+?), 1\) < 128 and (.+?) > 1048576:\n", src)
    assert branch is not None, "no split branch in kernel.py"
    after = src[branch.end():]
    assert after.index("k0_reduction_split_partials_kernel[") < after.index("else:") < \
        after.index("k0_reduction_kernel[")


def test_the_long_row_split_threshold_is_never_below_the_traced_row():
    """A call at the traced sizes runs the schedule the search chose and timed, however long its rows."""
    assert fused.long_rows_min(10) == LONG_ROWS_MIN
    assert fused.long_rows_min(LONG_ROWS_MIN * 3) == LONG_ROWS_MIN * 3


def test_no_long_row_split_for_split_schedules():
    module = looped_module("tiny_batchnorm3d_train.py", SPLIT=4)   # already split
    (kernel,) = module.kernels
    assert kernel.long_rows is None
    assert "_split_kernel" not in module.source and "if triton.cdiv(" not in module.source


def test_a_persistent_reduction_runs_its_looped_form_on_rows_longer_than_it_holds():
    """A persistent block is sized to the row at each call: rows past PERSISTENT_ROWS_MAX (and the traced row) run the
    looped form instead (with its own split for few long rows), so no call compiles a block sized to a row far
    longer than traced (level-2 11's GroupNorm at the referee's stretched channel count, 2026-12-06). At the traced
    sizes the persistent kernel runs."""
    module = looped_module("tiny_batchnorm3d_train.py", persistent=True, RBLOCK=2048)
    (kernel,) = module.kernels
    form = kernel.long_rows
    assert form is not None and form.programs is None and form.min_row == fused.PERSISTENT_ROWS_MAX
    assert form.kernel.kernel_name == "k0_reduction_looped_kernel" and form.kernel.long_rows is not None
    assert [k.kernel_name for k in kernel.every_kernel] == [
        "k0_reduction_kernel", "k0_reduction_looped_kernel", "k0_reduction_looped_split_partials_kernel",
        "k0_reduction_looped_split_kernel"]
    after = module.source[module.source.index("# k0: k0_reduction_kernel"):]
    outer = re.search(r"\n    if (.*) > 32768:\n", after)
    assert outer, after[:600]
    assert after.index("k0_reduction_looped_split_partials_kernel[") < after.index("k0_reduction_looped_kernel[") \
        < after.index("k0_reduction_kernel[")   # long rows first: the split, else looped; else the persistent one


def test_no_long_row_split_where_split_rows_cannot_combine():
    """argmax has no partials splitrows.py can combine (split_rows_possible): the looped kernel alone."""
    module = make_module(L1 / "argmax_last_axis.py", {"reduction": LOOPED})
    (kernel,) = module.kernels
    assert kernel.long_rows is None and "_split_kernel" not in module.source


# --- the referee under the interpreter, thresholds lowered ------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize("name, knobs", [
    ("tiny_batchnorm3d_train.py", {}),              # Welford partials over (N, D, H, W) per channel: strided
    ("tiny_groupnorm_few.py", {}),                  # Welford, the per-channel affine inside the row
    ("tiny_softmax.py", {}),                        # (max, sum of exp) partials, then the full-size output
    ("tiny_sum_axis0.py", {"XBLOCK": 4}),           # rows strided across the reduced axis, several a program
])
def test_the_long_row_split_passes_the_referee_where_it_runs(name, knobs, tmp_path, monkeypatch):
    """With LONG_ROWS_MIN at 0 and a small split (chunks of 64, 4 a row), every call of the referee's variants
    (fewer than 128 row blocks each) takes the long-row split: its kernels run on every draw."""
    monkeypatch.setattr(fused, "long_rows_min", lambda traced: 0)
    monkeypatch.setattr(fused, "LONG_ROWS_SCHEDULE", ReductionSchedule(XBLOCK=1, RBLOCK=64, SPLIT=4, persistent=False,
                                                                  num_warps=4))
    module = looped_module(name, **knobs)
    (kernel,) = module.kernels
    assert kernel.long_rows is not None and kernel.long_rows.min_row == 0
    assert "> 0:" in module.source
    verify(FUSED / name, module, tmp_path, edges=False)


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ["tiny_groupnorm_mean.py", "tiny_softmax.py"])
@pytest.mark.parametrize("split", [False, True])
def test_a_persistent_reductions_looped_form_passes_the_referee_where_it_runs(name, split, tmp_path, monkeypatch):
    """With its threshold at 0 every call runs the looped form, or with the split's at 0 too (the referee's calls
    have few rows) that one's split: the same answers as the persistent kernel's."""
    monkeypatch.setattr(fused, "persistent_rows_max", lambda traced: 0)
    if split:
        monkeypatch.setattr(fused, "long_rows_min", lambda traced: 0)
    module = make_module(FUSED / name, {"reduction": {"persistent": True}})
    forms = [k.long_rows for k in module.kernels if k.long_rows is not None]
    assert forms and all(f.min_row == 0 and f.programs is None for f in forms)
    assert all((f.kernel.long_rows is not None and f.kernel.long_rows.min_row == 0) == split for f in forms)
    verify(FUSED / name, module, tmp_path, edges=False)


# --- cross-compilation -------------------------------------------------------------------------------------

@pytest.mark.compile
@pytest.mark.parametrize("name", ["tiny_batchnorm3d_train.py", "tiny_softmax.py"])
def test_the_long_row_split_cross_compiles_without_spills(name, tmp_path):
    from kerntailor.builder import build_many
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    gen = prepared(FUSED / name)[2]
    module = looped_module(name, RBLOCK=1024, num_warps=8)
    (kernel,) = module.kernels
    split = kernel.long_rows.kernel.launches
    sources = [kernel_source(module.source, k, gen) for k in split]
    results = build_many(sources, [get_target("mi300x"), get_target("h200")], cache_dir=tmp_path / "build-cache")
    assert len(results) == 2 * len(split)
    for r in results:
        assert r.ok, f"{name} on {r.target}: {r.error}"
        print(f"{name} {r.target}: registers {r.facts.registers}, spills {r.facts.spills}")
        assert r.facts.spills == 0 and r.facts.scratch_bytes == 0, (name, r.target, r.facts)
