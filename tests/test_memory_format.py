"""A channels-last library convolution whose output stays channels-last for its tail (#19 item 3, codegen/
memory_format.py). Unit tier: which reader views map onto the physical layout (and with which strides), which do
not (a merge NHWC separates, a module output, a second convolution), the weight's copy kept across calls until the
parameter changes. Interpreter tier: modules with the layout kept pass the referee (static check included: only
the convolution is a library call) for a pointwise tail, a pooling + channel softmax tail, a global mean and a 3-d
convolution's channel softmax, and compute what the NCHW module computes; a KernelBench level-2 file at its odd
variant, where ../shared/kernelbench is next to the repository. The pointwise tail of a kept layout (and any
permuted read, a transpose) walks 2-D tiles with the load's contiguous axis along the tile's rows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import torch

from helpers import make_module, prepared
from kerntailor.capture.generalize import Generalized
from kerntailor.codegen.helpers.host import _channels_last_weight
from kerntailor.codegen.memory_format import _remap, channels_last_order, kept_layout, relayout
from kerntailor.codegen.sizes import const
from kerntailor.ir.types import View

DATA = Path(__file__).parent / "data" / "mixed"
TRANSPOSE = Path(__file__).parent / "data" / "codegen_fused" / "tiny_transpose_gelu.py"
ROOT = Path(__file__).resolve().parents[1]
KERNELBENCH_L2 = ROOT.parent / "shared" / "kernelbench" / "level2"
CHANNELS_LAST = {"library": {"channels_last": True}}
ALLOWED = {"allowed_ops": frozenset({"aten.convolution.default"}),
           "allowed_calls": frozenset({"torch.ops.aten.convolution.default"})}


# the library path of plain convolutions: without codegen's conv family (conftest's library_conv)
pytestmark = pytest.mark.usefixtures("library_conv")


def _conv(gen):
    return next(n for n in gen.graph.nodes if n.family == "conv")


# --- unit ------------------------------------------------------------------------------------------------------

def test_a_pooled_and_a_reduced_output_are_read_by_their_physical_strides():
    """conv_pool_softmax's max pool reads the (N, 8, 12, 10) output as stored (N, 12, 10, 8): C steps by 1, W by
    C, H by W·C; the module keeps the output channels-last and its pool kernel indexes it so."""
    _, _, gen, _ = prepared(DATA / "conv_pool_softmax.py")
    layout = kept_layout(gen, _conv(gen))
    assert layout is not None and layout.order == (0, 2, 3, 1) and layout.torch_format == "torch.channels_last"
    ((prefix, conc, _),) = layout.views
    assert prefix[:2] == ("node", "pw0") and conc == (960, 1, 80, 8)
    physical = relayout(gen, (layout,))
    assert physical.graph.node("pw0").operands[0].strides == (960, 1, 80, 8)
    assert gen.graph.node("pw0").operands[0].strides == (960, 120, 10, 1)   # the captured graph is untouched
    source = make_module(DATA / "conv_pool_softmax.py", CHANNELS_LAST).source
    assert ".contiguous(memory_format=torch.channels_last)  # conv2d" in source
    assert "_channels_last_input(x, torch.channels_last)" in source   # the input by the tiled copy, not torch's
    assert "_channels_last_weight(p_conv_weight, torch.channels_last)" in source
    nchw = make_module(DATA / "conv_pool_softmax.py").source
    assert "memory_format" not in nchw and "_channels_last_weight" not in nchw


def _bare() -> Generalized:
    """No graph and no fitted expressions: every size is the constant it was traced at."""
    from kerntailor.ir.nodes import Graph

    return Generalized(Graph((), (), (), ()), (), (), ())


@pytest.mark.parametrize(("view", "expected"), [
    (View("c", (2, 6, 20), (120, 20, 1)), (120, 1, 6)),            # (N, C, H·W): H and W stay adjacent
    (View("c", (2, 2, 3, 4, 5), (120, 60, 20, 5, 1)), (120, 3, 1, 30, 6)),   # C split (G, C/G)
    (View("c", (2, 4, 5, 6), (120, 5, 1, 20)), (120, 30, 6, 1)),   # a permute to (N, H, W, C): contiguous now
    (View("c", (2, 6, 4, 5, 3), (120, 20, 5, 1, 0)), (120, 1, 30, 6, 0)),    # a broadcast axis stays 0
    (View("c", (2, 2, 60), (120, 60, 1)), None),                   # GroupNorm's (N, G, C/G·H·W): NHWC separates
    (View("c", (2, 6, 4, 5), (120, 20, 5, 1), 20), None),          # an offset (a slice)
    (View("c", (2, 6, 4, 5), (120, 20, 5, -1)), None),             # a flip
])
def test_a_view_maps_onto_the_channels_last_layout_only_as_whole_or_split_dims(view, expected):
    """A reader view of a (2, 6, 4, 5) buffer stored channels-last: its new strides, or None where strides cannot
    say it (the layout is then not kept, and the output is made contiguous as before)."""
    shape = (2, 6, 4, 5)
    sizes = [const(n) for n in shape]
    got = _remap(_bare(), ("node", "r", "operand", 0), view, shape, channels_last_order(4), sizes)
    assert (got[0] if got else None) == expected
    if got:
        assert all(s.is_constant and s.coeff == Fraction(c) for s, c in zip(got[1], expected))


def test_an_output_of_the_module_is_not_kept_channels_last():
    """The module returns what the reference returns (contiguous NCHW): a convolution whose output is itself an
    output is made contiguous, whatever the schedule says."""
    from dataclasses import replace

    _, _, gen, _ = prepared(DATA / "conv_bias_relu.py")
    conv = _conv(gen)
    assert kept_layout(gen, conv) is not None
    returned = replace(gen, graph=replace(gen.graph, outputs=gen.graph.outputs + (View.of(conv.name, conv.out.shape),)))
    assert kept_layout(returned, conv) is None


def test_the_search_times_both_layouts_where_the_output_can_stay_channels_last():
    """The library group's space (search/families.py) has the knob channels_last, NCHW first, exactly where the
    output can be kept; the pipeline times it in measured mode only (no model predicts cuDNN's choice)."""
    from dataclasses import replace

    from kerntailor.codegen import FAMILIES
    from kerntailor.codegen.library import LibrarySchedule
    from kerntailor.search.families import make_space
    from kerntailor.targets import resolve_target

    _, _, gen, plan = prepared(DATA / "conv_pool_softmax.py")
    (group,) = [g for g in plan.groups if g.family == "library"]
    sizes = FAMILIES["library"].work_sizes(gen, group)
    assert sizes["layouts"] == 2
    space = make_space("library", resolve_target("h200"), dtype="fp32", **sizes)
    assert [space.schedule(c, LibrarySchedule()) for c in space.enumerate()] == \
        [LibrarySchedule(), LibrarySchedule(channels_last=True)]
    conv = _conv(gen)
    returned = replace(gen, graph=replace(gen.graph, outputs=gen.graph.outputs + (View.of(conv.name, conv.out.shape),)))
    assert "layouts" not in FAMILIES["library"].work_sizes(returned, group)


def test_the_tails_schedules_are_valid_under_both_layouts():
    """The tail's space is sized from the captured graph (its work sizes do not see the layout): a sample of its
    schedules (the pool's and the channel softmax's) writes a module under the NCHW and the kept layout alike."""
    import random
    from dataclasses import replace

    from kerntailor.codegen import default_schedule, generate_module
    from kerntailor.generate.kernels import group_work
    from kerntailor.search.families import make_space
    from kerntailor.targets import resolve_target

    spec, _, gen, plan = prepared(DATA / "conv_pool_softmax.py")
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    (lib,) = [g for g in plan.groups if g.family == "library"]
    rng = random.Random(0)
    for group in (g for g in plan.groups if g.family != "library"):
        _, sizes = group_work(gen, group, "fp32")
        space = make_space(group.family, resolve_target("h200"), dtype="fp32", **sizes)
        configs = [c for c in (space.sample(rng) for _ in range(6)) if not space.violations(c)][:3]
        assert configs, group.name
        for config in configs:
            for flag in (False, True):
                schedules = dict(base, **{lib.name: replace(base[lib.name], channels_last=flag),
                                          group.name: space.schedule(config, base[group.name])})
                source = generate_module(spec, gen, plan, schedules, "h200", "sm_90").source
                assert ("memory_format=torch.channels_last)  # conv2d" in source) == flag, (group.name, config)


def test_the_weights_channels_last_copy_is_made_once_until_the_parameter_changes():
    """_channels_last_weight (kernel.py's, codegen/helpers/host.py): the same copy while the parameter is unchanged,
    a new one after an in-place update (its version) or for another tensor at another address."""
    w = torch.nn.Parameter(torch.randn(8, 3, 3, 3))
    first = _channels_last_weight(w, torch.channels_last)
    assert first.is_contiguous(memory_format=torch.channels_last) and torch.equal(first, w.detach())
    assert _channels_last_weight(w, torch.channels_last) is first
    with torch.no_grad():
        w.mul_(2.0)
    second = _channels_last_weight(w, torch.channels_last)
    assert second is not first and torch.equal(second, w.detach())
    other = torch.nn.Parameter(torch.randn(8, 3, 3, 3))
    assert torch.equal(_channels_last_weight(other, torch.channels_last), other.detach())


def _tail(source: str) -> str:
    """The generated pointwise kernel's text in a module's source."""
    start = source.index("def k1_pointwise_kernel")
    return source[start:source.index("\n\n", start)]


def _load_terms(kernel: str, pointer: str) -> dict[str, str]:
    """{coordinate: stride} of the load from `pointer` (its offset a sum of `coordinate * stride`)."""
    offset = re.search(rf"tl\.load\({pointer} \+ \((.*?)\), mask", kernel).group(1)
    return dict(term.split(" * ") for term in offset.split(" + "))


def test_a_kept_layouts_pointwise_tail_loads_along_the_tiles_rows_and_stores_along_its_columns():
    """conv_bias_relu's tail reads the (N, 8, 7, 9) output stored NHWC: a 2-D tile of YBLOCK rows (N·C, the
    channel fastest) by a chunk of H·W, the load's stride-1 coordinate the row's channel (from xindex), its H·W
    coordinate (rindex) stepping by C, the NCHW store contiguous along rindex; both axes masked. tile2d=False
    (and the NCHW module) keep the row walk, which steps the load by C between neighbouring lanes."""
    kernel = _tail(make_module(DATA / "conv_bias_relu.py", CHANNELS_LAST).source)
    assert "Tiles: 2-D" in kernel
    terms = _load_terms(kernel, "conv0_ptr")
    channel = next(c for c, s in terms.items() if s == "1")
    assert re.search(rf"{channel} = xindex % 8\b", kernel)
    assert re.search(r"(\w+) = rindex\n", kernel) and terms[re.search(r"(\w+) = rindex\n", kernel).group(1)] == "8"
    assert "xindex = ((tl.program_id(0) // nchunks) * XBLOCK + tl.arange(0, XBLOCK))[:, None]" in kernel
    assert "tl.store(pw1_ptr + (xindex * 63 + rindex), v_pw1, mask=xmask & rmask)" in kernel
    off = _tail(make_module(DATA / "conv_bias_relu.py", {**CHANNELS_LAST, "pointwise": {"tile2d": False}}).source)
    assert "Tiles: 2-D" not in off and "nchunks" not in off
    assert "Tiles: 2-D" not in _tail(make_module(DATA / "conv_bias_relu.py").source)


def test_any_permuted_read_is_tiled_with_its_sizes_as_arguments():
    """Not a convolution's: gelu(x.transpose(1, 2)) reads x (B, M, N) for a (B, N, M) output. The rows' innermost
    coordinate (from xindex) steps the load by 1, the columns' (rindex) by M; the sizes are runtime arguments,
    the grid row blocks x column chunks, the tile YBLOCK x XBLOCK / YBLOCK elements (the last axis's power of two
    at most)."""
    source = make_module(TRANSPOSE).source
    kernel = source[source.index("def k0_pointwise_kernel"):source.index("_INTERPRETED")]
    assert "Tiles: 2-D" in kernel
    terms = _load_terms(kernel, "x_ptr")
    channel = next(c for c, s in terms.items() if s == "1")
    assert re.search(rf"{channel} = xindex % s\d\b", kernel)
    assert any(s.startswith("s") for s in terms.values())   # M, the column stride: a runtime size
    launch = next(line for line in source.splitlines() if "k0_pointwise_kernel[" in line)
    assert "triton.cdiv(d0 * d2, 32) * triton.cdiv(d1, 16)" in launch and "XBLOCK=32, RBLOCK=16" in launch
    small = make_module(TRANSPOSE, {"pointwise": {"YBLOCK": 4, "XBLOCK": 32}}).source
    assert "XBLOCK=4, RBLOCK=8" in small


def test_a_kept_layouts_pool_walks_rows_with_the_channel_innermost():
    """A pool reading the NHWC output (itself: conv_avgpool; through its ReLU prologue: conv_pool_softmax) takes
    its tile's rows in the order (n, o_1, c), c the fastest, so that the load's stride-1 coordinate varies along the
    rows; the store's flat NCHW position is rebuilt from the coordinates, and the tile has at most 32 columns. The
    NCHW modules keep the rows (n, c, o_1) and their flat position."""
    for name, pointer in (("conv_avgpool", "conv0_ptr"), ("conv_pool_softmax", "conv0_ptr")):
        source = make_module(DATA / f"{name}.py", CHANNELS_LAST).source
        kernel = source[source.index("def k1_pool_kernel"):source.index("_INTERPRETED")]
        assert "# rows: n, o_1.., c" in kernel and "i1 = yindex % 8\n" in kernel, name
        assert "xindex = ((i0 * 8 + i1) * s2 + i2) * s0 + i3" in kernel, name
        load = re.search(rf"tl\.load\({pointer} \+ \((.*?)\), mask", kernel).group(1)
        if load.startswith("base + "):
            load = re.search(r"base = (.*?)  #", kernel).group(1) + load[4:]
        assert re.search(r"\bi1\b(?! \*)", load), (name, load)   # C steps by 1
        nchw = make_module(DATA / f"{name}.py").source
        assert "# rows: n, c, o_1.." in nchw and "xindex = yindex * s0 + i3" in nchw, name
        launch = next(line for line in source.splitlines() if "k1_pool_kernel[" in line)
        assert int(re.search(r"XBLOCK=(\d+)", launch).group(1)) <= 32, launch


def test_the_search_times_the_2d_tile_where_a_read_may_be_permuted():
    """A pointwise group reading a convolution output that may stay channels-last (or a transpose) has the work
    size permuted and knobs tile2d (the writer's default, True, first) and YBLOCK; a group without one has
    neither (its space as before)."""
    from kerntailor.codegen import FAMILIES
    from kerntailor.search.families import make_space
    from kerntailor.targets import resolve_target

    for path, permuted in ((DATA / "conv_bias_relu.py", True), (TRANSPOSE, True),
                           (TRANSPOSE.parent / "tiny_channel_bias_rows.py", False)):
        _, _, gen, plan = prepared(path)
        (group,) = [g for g in plan.groups if g.family == "pointwise"]
        sizes = FAMILIES["pointwise"].work_sizes(gen, group)
        assert ("permuted" in sizes) == permuted, path.stem
        space = make_space("pointwise", resolve_target("h200"), dtype="fp32", **sizes)
        knobs = {k.name: k.values for k in space.knobs}
        assert (knobs.get("tile2d", (True,))[0], "YBLOCK" in knobs) == (True, permuted), path.stem


def test_a_reduction_over_a_kept_channels_last_output_is_strided():
    """BatchNorm's statistics over (N, H, W) and the global pool over (H, W) of a convolution's output
    (conv_batchnorm_mean, level-2 77's tail): as captured (NCHW) the pool's rows are contiguous and its default a
    persistent row; read channels-last, both reductions keep the innermost axis in memory (the channels), so their
    work sizes say strided (the space's wide row tiles and strided seeds, for either layout the search may pick)
    and their default under that layout tiles rows across the channels (XBLOCK > 1, a short RBLOCK)."""
    from kerntailor.codegen import FAMILIES
    from kerntailor.codegen.fused import _kept_view, default_schedule, memory_order

    _, _, gen, plan = prepared(DATA / "conv_batchnorm_mean.py")
    stats, pool = [g for g in plan.groups if g.family == "reduction"]
    assert (stats.reduce_axes, pool.reduce_axes) == ((0, 2, 3), (2, 3))
    kept = _kept_view(gen, pool)
    assert kept is not gen and _kept_view(gen, stats) is not gen
    for group in (stats, pool):
        assert memory_order(gen, group) == (0, 1, 2, 3)
        assert memory_order(kept, group) == (0, 2, 3, 1)
        assert FAMILIES["reduction"].work_sizes(gen, group)["strided"] == 1
    as_written, channels_last = default_schedule(gen, pool), default_schedule(kept, pool)
    assert as_written.persistent and as_written.XBLOCK < 64 and as_written.RBLOCK >= 90
    assert channels_last.XBLOCK == 64 and channels_last.RBLOCK == 64


def test_a_group_that_writes_a_full_size_output_keeps_its_written_order():
    """A training BatchNorm whose normalised tensor is an output (its store walks the written order) is not
    re-ordered by its load's layout; a transposed load of a reduction with row outputs only is."""
    from dataclasses import replace as dc_replace

    from kerntailor.codegen.fused import memory_order

    _, _, gen, plan = prepared(DATA.parent / "codegen_fused" / "tiny_transpose_gelu.py")
    (group,) = plan.groups
    assert memory_order(gen, group) == tuple(range(len(group.space)))   # pointwise: a full-size output
    _, _, gen, plan = prepared(DATA / "conv_batchnorm_mean.py")
    stats = next(g for g in plan.groups if g.family == "reduction")
    full = dc_replace(stats, outputs=stats.outputs + (stats.nodes[0],))   # pw0: the full-size bias add
    kept = relayout(gen, (kept_layout(gen, _conv(gen)),))
    assert memory_order(kept, stats) == (0, 2, 3, 1) and memory_order(kept, full) == (0, 1, 2, 3)


@pytest.mark.parametrize(("rows", "xblock", "r", "rblock", "split"), [
    (128, 64, 414720, 64, 128),      # level-2 77's statistics: 2 row blocks -> 256 programs
    (2048, 64, 25920, 64, 8),        # 77's pool, channels-last: 32 row blocks
    (64, 64, 16777216, 64, 256),     # level-1 33_BatchNorm: one row block
    (128, 64, 8000, 64, 0),          # short rows: one program's loop is short enough
    (32768, 64, 65536, 64, 0),       # 512 row blocks: enough programs already
    (8, 64, 20000, 4096, 4),         # every program at least one RBLOCK chunk
])
def test_the_strided_default_splits_few_long_rows(rows, xblock, r, rblock, split):
    """strided_split: SPLIT brings few row blocks of long rows to WAVE_PROGRAMS programs, whole chunks each."""
    from kerntailor.codegen.fused import WAVE_PROGRAMS, strided_split

    assert strided_split(rows, xblock, r, rblock) == split
    if split:
        assert -(-rows // xblock) * split >= min(WAVE_PROGRAMS, r // rblock) and split * rblock <= r


@pytest.mark.parametrize("target", ["h200", "mi300x"])
def test_few_strided_row_blocks_are_split_in_the_space_and_its_seeds(target):
    """Level-2 77's statistics kept channels-last (R 414,720 per channel, X 128 channels, strided): the space's
    SPLIT counts row blocks of 64, so the strided default (64 x 64, SPLIT 128) and split strided seeds lie in it,
    each about two programs a CU; without the strided flag the values stop at 4 programs a CU of 128 rows."""
    from kerntailor.codegen.fused import ReductionSchedule
    from kerntailor.search.families import make_space, row_splits, seed_knobs
    from kerntailor.targets import get_target

    t = get_target(target)
    sizes = {"R": 414720, "X": 128, "strided": 1}
    space = make_space("reduction", t, dtype="fp32", **sizes)
    default = ReductionSchedule(XBLOCK=64, RBLOCK=64, SPLIT=128, persistent=False, num_warps=8)
    assert not space.violations(space.config_of(default))
    assert max(row_splits(t, R=414720, X=128, strided=1)) >= 512 > max(row_splits(t, R=414720, X=128))
    seeds = seed_knobs("reduction", t, dtype="fp32", **sizes)
    strided = [sd for sd in seeds if sd["XBLOCK"] >= 64]
    assert strided and all(sd["SPLIT"] and not sd["persistent"] for sd in strided)
    for sd in strided:
        assert not space.violations(space.config_of(default.retune(sd))), sd
        programs = -(-128 // sd["XBLOCK"]) * sd["SPLIT"]
        assert t.compute_units <= programs <= 4 * t.compute_units, (sd, programs)


def test_a_library_layout_candidate_times_the_later_groups_under_their_layout_defaults():
    """The search of a library group's layout (generate/group_search.py's Candidates) writes each candidate's
    module with the groups not searched yet at their defaults under that layout (codegen's layout_defaults); NCHW
    leaves them as they are. Level-2 77's tail was timed under NCHW's defaults in the channels-last candidate (a
    persistent pool of one channel, 512 bytes apart, a program)."""
    from types import SimpleNamespace

    from kerntailor.codegen import default_schedule, layout_defaults
    from kerntailor.codegen.library import LibrarySchedule
    from kerntailor.generate.group_search import Candidates
    from kerntailor.search.families import make_space
    from kerntailor.targets import resolve_target

    spec, _, gen, plan = prepared(DATA / "conv_batchnorm_mean.py")
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    (lib,) = [g for g in plan.groups if g.family == "library"]
    later = frozenset(g.name for g in plan.groups if g is not lib)
    assert layout_defaults(gen, plan, base, later) == {}
    written = []
    run = SimpleNamespace(gen=gen, plan=plan, module=lambda schedules: written.append(schedules) or
                          SimpleNamespace(kernels=[SimpleNamespace(group=lib.name, source="")], source=""))
    space = make_space("library", resolve_target("h200"), dtype="fp32", layouts=2)
    candidates = Candidates(run, base, lib, space, LibrarySchedule(), later)
    for config in space.enumerate():
        candidates(config)
    nchw, kept = written
    assert all(nchw[name] == base[name] for name in later)
    expected = layout_defaults(gen, plan, dict(base, **{lib.name: LibrarySchedule(channels_last=True)}), later)
    assert set(expected) == later and all(kept[name] == expected[name] for name in later)
    assert kept[plan.groups[-1].name] != base[plan.groups[-1].name]   # the pool: strided under channels-last


def test_the_groups_after_a_library_group_are_searched_from_the_layout_it_chose(monkeypatch):
    """generate's group-by-group search (pipeline._search_groups): the library group's search is told which groups
    are not searched yet, and where it picks channels-last, each later group's search starts from its default under
    that layout (search_group stubbed: no GPU here)."""
    import contextlib
    from types import SimpleNamespace

    from kerntailor.codegen import default_schedule, layout_defaults
    from kerntailor.codegen.library import LibrarySchedule
    from kerntailor.generate import pipeline
    from kerntailor.generate.group_search import GroupSearch

    _, _, gen, plan = prepared(DATA / "conv_batchnorm_mean.py")
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    (lib,) = [g for g in plan.groups if g.family == "library"]
    later = frozenset(g.name for g in plan.groups if g is not lib)
    seen = {}

    def search(run, schedules, group, unsearched=frozenset(), seconds=None):
        seen[group.name] = (dict(schedules), unsearched)
        chosen = LibrarySchedule(channels_last=True) if group is lib else schedules[group.name]
        return GroupSearch(group, (chosen,), (1e-3,), None, (), {}, None)

    monkeypatch.setattr(pipeline, "search_group", search)
    monkeypatch.setattr(pipeline, "twin_keys", lambda run, schedules: {})
    run = SimpleNamespace(gen=gen, plan=plan, library_groups={lib.name: "conv"}, measured=True, store=None,
                          timed=lambda stage: contextlib.nullcontext(), settings=SimpleNamespace(budget_s=120.0))
    pipeline._search_groups(run, dict(base))
    assert seen[lib.name][1] == later
    expected = layout_defaults(gen, plan, dict(base, **{lib.name: LibrarySchedule(channels_last=True)}), later)
    assert expected and all(seen[name][0][name] == expected[name] for name in later)
    assert any(expected[name] != base[name] for name in later)


# --- interpreter -----------------------------------------------------------------------------------------------

CASES = ["conv_bias_relu", "conv_pool_softmax", "conv_gelu_mean", "conv3d_softmax", "conv_avgpool",
         "conv_batchnorm_mean"]


@pytest.mark.interpreter
@pytest.mark.parametrize("name", CASES)
def test_a_kept_channels_last_output_passes_the_referee(name, tmp_path):
    """The channels-last module (its tail reading NHWC / NDHWC, its output written NCHW by the tail) passes the
    referee at the odd variant, the static check allowing the convolution only."""
    from kerntailor.verify import VerifySettings, verify_candidate

    problem, _, gen, _ = prepared(DATA / f"{name}.py")
    assert kept_layout(gen, _conv(gen)) is not None
    path = tmp_path / "kernel.py"
    path.write_text(make_module(DATA / f"{name}.py", CHANNELS_LAST).source)
    v = verify_candidate(problem, path, VerifySettings(variants=("odd",), **ALLOWED))
    assert v.passed, (v.check, v.reason)


@pytest.mark.interpreter
@pytest.mark.parametrize(("path", "knobs"), [
    (DATA / "conv_bias_relu.py", {**CHANNELS_LAST, "pointwise": {"YBLOCK": 16, "XBLOCK": 128}}),
    (TRANSPOSE, {"pointwise": {"YBLOCK": 8, "XBLOCK": 64}}),
], ids=["conv_nhwc_16x8", "transpose_8x8"])
def test_a_2d_tiled_permuted_read_passes_the_referee(path, knobs, tmp_path):
    """Tiles that cross samples (16 rows of 8 channels) and leave ragged edges on both axes (63 = 7 x 8 + 7
    columns; the odd variant's rows), for the kept NHWC layout and for a transpose: the referee passes (its edges
    stage off, as helpers.judge has it under the interpreter)."""
    from kerntailor.verify import VerifySettings, verify_candidate

    problem = prepared(path)[0]
    module = tmp_path / "kernel.py"
    module.write_text(make_module(path, knobs).source)
    assert "Tiles: 2-D" in module.read_text()
    allowed = ALLOWED if path != TRANSPOSE else {"allowed_ops": frozenset(), "allowed_calls": frozenset()}
    v = verify_candidate(problem, module, VerifySettings(variants=("odd",), edges=False, **allowed))
    assert v.passed, (v.check, v.reason)


@pytest.mark.interpreter
@pytest.mark.parametrize("knobs", [
    {"XBLOCK": 4, "RBLOCK": 16, "SPLIT": 4, "persistent": False},    # split rows: partials, then the combining pass
    {"XBLOCK": 8, "RBLOCK": 8, "SPLIT": 0, "persistent": False},     # strided tiles, one program a row block
], ids=["split", "looped"])
def test_strided_statistics_and_pool_over_a_kept_layout_pass_the_referee(knobs, tmp_path):
    """conv_batchnorm_mean kept channels-last, both reductions under strided tiles (rows across the channels),
    split or looped: the referee passes at the odd variant (the static check allowing the convolution only)."""
    from kerntailor.verify import VerifySettings, verify_candidate

    problem = prepared(DATA / "conv_batchnorm_mean.py")[0]
    module = tmp_path / "kernel.py"
    module.write_text(make_module(DATA / "conv_batchnorm_mean.py", {**CHANNELS_LAST, "reduction": knobs}).source)
    if knobs["SPLIT"]:
        assert "_partials_kernel[" in module.read_text()
    v = verify_candidate(problem, module, VerifySettings(variants=("odd",), edges=False, **ALLOWED))
    assert v.passed, (v.check, v.reason)


_COMPARE = """
import importlib.util, json, sys
import torch
from kerntailor.problem import load_problem
out = {}
for name, problem, nchw, kept in json.loads(sys.argv[1]):
    spec = load_problem(problem)
    variant = spec.variants[-1].name
    torch.manual_seed(0)
    inputs = spec.make_inputs(variant, device="cpu")
    model = spec.make_model(variant, device="cpu")
    results = []
    for path in (nchw, kept):
        s = importlib.util.spec_from_file_location(name + str(len(results)), path)
        m = importlib.util.module_from_spec(s)
        s.loader.exec_module(m)
        candidate = m.ModelNew(*spec.init_inputs(variant))
        candidate.load_state_dict(model.state_dict())
        with torch.no_grad():
            results.append(candidate(*inputs))
    with torch.no_grad():
        ref = model.double()(*[x.double() for x in inputs])
    out[name] = {"kept_vs_nchw": float((results[1] - results[0]).abs().max()),
                 "kept_vs_ref": float((results[1].double() - ref).norm() / ref.norm()),
                 "contiguous": results[1].is_contiguous()}
print(json.dumps(out))
"""


@pytest.mark.interpreter
def test_the_kept_layout_computes_what_the_nchw_module_computes(tmp_path):
    """Both modules of every case on the same inputs, in one interpreter process: the same values to rounding (the
    tail adds in another order where it reduces), the reference's to fp32 accuracy, and a contiguous output."""
    jobs = []
    for name in CASES:
        paths = []
        for label, knobs in (("nchw", None), ("kept", CHANNELS_LAST)):
            path = tmp_path / f"{name}_{label}.py"
            path.write_text(make_module(DATA / f"{name}.py", knobs).source)
            paths.append(str(path))
        jobs.append((name, str(DATA / f"{name}.py"), *paths))
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, "-c", _COMPARE, json.dumps(jobs)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for name in CASES:
        r = result[name]
        assert r["kept_vs_nchw"] < 1e-5 and r["kept_vs_ref"] < 1e-5 and r["contiguous"], (name, r)


@pytest.mark.interpreter
@pytest.mark.slow
@pytest.mark.skipif(not KERNELBENCH_L2.is_dir(), reason="../shared/kernelbench is not next to the repository")
def test_a_kernelbench_conv3d_min_softmax_keeps_the_layout_and_passes_the_referee(tmp_path):
    """level2/24_Conv3d_Min_Softmax (a min over depth, then a softmax over channels), unchanged, at its odd
    variant: the output stays channels-last-3d and the module passes the referee."""
    from kerntailor.verify import VerifySettings, verify_candidate

    path = KERNELBENCH_L2 / "24_Conv3d_Min_Softmax.py"
    problem, _, gen, _ = prepared(path)
    assert kept_layout(gen, _conv(gen)) is not None
    module = tmp_path / "kernel.py"
    module.write_text(make_module(path, CHANNELS_LAST).source)
    assert "contiguous(memory_format=torch.channels_last_3d)  # conv3d" in module.read_text()
    v = verify_candidate(problem, module, VerifySettings(variants=("odd",), **ALLOWED))
    assert v.passed, (v.check, v.reason)


def test_a_tail_over_a_library_output_is_cross_compiled_with_its_sizes_specialized(tmp_path):
    """The reductions over the convolution's output (conv_batchnorm_mean at 34 x 36, whose spatial sizes the
    variants vary, kept NHWC) take row counts from the library node's output dims (Dim(node="conv0")).
    kernel_source's specialization evaluates them at the traced shapes as Triton's launcher does, so each is "D"
    exactly where its value is a multiple of 16: left unmarked, level-2 77's cross-compiled statistics kernel loaded
    one float at a time where the one that runs loads four."""
    from kerntailor.generate.kernels import kernel_source, traced_value

    path = tmp_path / "conv_batchnorm_mean_34x36.py"
    text = (DATA / "conv_batchnorm_mean.py").read_text()
    path.write_text(text.replace("height = 11", "height = 34").replace("width = 12", "width = 36"))
    _, _, gen, _ = prepared(path)
    module = make_module(path, CHANNELS_LAST)
    conv = _conv(gen)
    seen = set()
    for kernel in (k for g in module.kernels for k in g.every_kernel if k.source):
        codes = dict(kernel_source(module.source, kernel, gen).specialization)
        for name, expr in kernel.size_args:
            value = traced_value(gen, expr)
            assert value is not None, (kernel.kernel_name, name, expr)
            assert (codes.get(name) == "D") == (value % 16 == 0), (kernel.kernel_name, name, value, codes)
            if any(d.node == conv.name for d in expr.dims):
                seen.add(value)
    n, c, h, w = conv.out.shape
    assert (h, w) == (32, 34) and {h * w, n * h * w} <= seen, seen   # the pool's rows, the statistics' (both "D")
