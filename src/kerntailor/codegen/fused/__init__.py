"""Triton source for a memory-bound fusion group: a pointwise chain, or reductions with their prologue
and epilogue (softmax, norms, losses), over any set of axes.

A pointwise group walks its output's elements in row-major order, XBLOCK per program; when some operand
needs coordinates (a broadcast, a slice, a `cat`), it walks [rows, last axis] tiles instead, so only row
indices are divided, once per row. A reduction group walks rows (the kept axes, XBLOCK per program) and,
inside a row, the reduced axes in RBLOCK chunks: tiles are [XBLOCK, RBLOCK]. Persistent schedules
(RBLOCK covers the row) read each input once and keep every value in registers; looped schedules make
one pass per dependent reduction stage plus one for the stores (reductions.py: two stages fold into one pass
as online softmax or Welford). A whole-tensor reduction can be split over many programs (split.py).

The parts, along the data flow: `space.py` (the iteration space, refined by the members' shapes and
coalesced: a pure function of the group), `layout.py` (coordinates, passes and row loads laid out once the
body is complete), `addressing.py` (index text), `writer.py` (values and the kernel), `reductions.py`,
`split.py`, `patterns.py` (expressions computed another way: Mish's tanh(softplus), a variance's square).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Generalized
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.split import why_not_split
from kerntailor.codegen.fused.splitrows import split_plan
from kerntailor.codegen.fused.writer import FusedWriter
from kerntailor.codegen.kernel import GeneratedKernel, LongRowSplit
from kerntailor.codegen.memory_format import kept_layout, relayout
from kerntailor.codegen.schedule import Schedule, ScheduleError
from kerntailor.codegen.sizes import row_sizes
from kerntailor.plan.fusion import FusionGroup
from kerntailor.search.families import LOOPED_TILES_LIVE, SHORT_ROWS_TILE, short_rows_top

__all__ = ["PointwiseSchedule", "ReductionSchedule", "default_schedule", "generate_fused", "pointwise_work_sizes",
           "reduction_work_sizes", "split_possible"]


@dataclass(frozen=True, kw_only=True)
class PointwiseSchedule(Schedule):
    """XBLOCK elements per program, in row-major order; where some load needs coordinates, [rows, last axis]
    tiles of about XBLOCK elements instead (`tiles=False` keeps the flat walk). Where a load is permuted against
    the output (its contiguous axis is the rows', an NHWC buffer read for an NCHW output), `tile2d` walks
    [YBLOCK rows, XBLOCK / YBLOCK of the last axis] tiles, coalesced for the load along the rows and for the
    store along the last axis (writer.py's tile_mode; `tile2d=False` keeps the other walks)."""

    family: ClassVar[str] = "pointwise"
    order: ClassVar[tuple[str, ...]] = ("XBLOCK", "num_warps", "num_stages", "waves_per_eu", "tiles", "tile2d",
                                        "YBLOCK")
    shown: ClassVar[tuple[str, ...]] = ("XBLOCK", "num_warps")

    XBLOCK: int = 1024
    tiles: bool = True
    tile2d: bool = True
    YBLOCK: int = 32

    def __post_init__(self) -> None:
        super().__post_init__()
        self.power_of_two("XBLOCK")
        self.power_of_two("YBLOCK")
        self.one_of("tiles", (True, False))
        self.one_of("tile2d", (True, False))


@dataclass(frozen=True, kw_only=True)
class ReductionSchedule(Schedule):
    """XBLOCK rows per program, RBLOCK elements of a row at a time: the whole row in registers (`persistent`,
    RBLOCK then covers it at run time) or a loop over it. SPLIT > 0 spreads each row over SPLIT programs, looping
    over their chunks: one whole-tensor row (split.py; the default's choice, which the search keeps), or, where a
    group has few long rows, each of its rows (splitrows.py: two kernels; a knob the search tunes). WAVE > 0 (with
    SPLIT > 0, split rows only) fuses the two into one kernel that normalises each wave of WAVE row blocks one
    wave after their partials, while the cache still holds the rows (splitrows.py's write_windowed). COOP = 1 (with
    SPLIT > 0, split rows only, not windowed) makes it one cooperative kernel: each program reads its chunk, one
    RBLOCK tile, once, waits for its row's SPLIT programs' partials and normalises from registers (splitrows.py's
    write_cooperative; GPU only: the search offers it only where the programs of a row are resident together). Its
    SPLIT may be any count (ceil(row / RBLOCK): no empty program); the others' are powers of two. REUSE (the
    cooperative kernel's only; reuse.py): 1 keeps softmax's phase-A exponentials for phase B, 0 recomputes the exp
    per element, unset (None) decides by the row's dtype (16-bit: 1, else 0; reuse.py's reuse_by_default). maxnreg
    caps a thread's registers on NVIDIA (a compile option: Schedule.options)."""

    family: ClassVar[str] = "reduction"
    order: ClassVar[tuple[str, ...]] = ("XBLOCK", "RBLOCK", "SPLIT", "WAVE", "COOP", "REUSE", "persistent",
                                        "num_warps", "num_stages", "waves_per_eu", "maxnreg")
    shown: ClassVar[tuple[str, ...]] = ("XBLOCK", "RBLOCK", "persistent", "num_warps")

    XBLOCK: int
    RBLOCK: int
    persistent: bool
    SPLIT: int = 0
    WAVE: int = 0
    COOP: int = 0
    REUSE: int | None = None
    maxnreg: int = 0   # NVIDIA: registers a thread may use (ptx .maxnreg; 0: no cap)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.power_of_two("XBLOCK")
        self.power_of_two("RBLOCK")
        self.one_of("persistent", (True, False))
        if self._int("SPLIT") and not self.COOP:   # cooperative: any SPLIT, ceil(row / RBLOCK) (no empty program)
            self.power_of_two("SPLIT")
        if self._int("WAVE"):
            self.power_of_two("WAVE")
            if not self.SPLIT:
                raise ScheduleError(f"reduction schedule: WAVE={self.WAVE} needs SPLIT > 0 (it windows split rows)")
        self.one_of("COOP", (0, 1))
        if self.COOP and (not self.SPLIT or self.WAVE):
            raise ScheduleError(f"reduction schedule: COOP=1 needs SPLIT > 0 and WAVE = 0 (it is its own split, "
                                f"not windowed): SPLIT={self.SPLIT}, WAVE={self.WAVE}")
        self.cap_registers("maxnreg")
        if self.REUSE is not None and (isinstance(self.REUSE, bool) or self.REUSE not in (0, 1)):
            raise ScheduleError(f"reduction schedule: REUSE={self.REUSE!r}; expected 0 (recompute the exp), 1 (reuse "
                                f"phase A's) or unset (by dtype)")

    @property
    def row_split(self) -> int:
        return self.SPLIT

    def retune(self, knobs) -> ReductionSchedule:
        """A split reduction loops over its chunks, whatever the search's knobs say. A windowed split (WAVE > 0) is
        the default's own choice with its own tiles: knobs that set tiles (XBLOCK, RBLOCK, persistent) or SPLIT
        but not WAVE (a space without the knob, a looped schedule asked for) give the kernel of those knobs
        unwindowed (SPLIT as they say, else 0)."""
        tiles = {"XBLOCK", "RBLOCK", "persistent", "SPLIT"} & set(knobs)
        if self.WAVE and tiles and "WAVE" not in knobs:
            return replace(self, SPLIT=0, WAVE=0).retune(knobs)
        if self.COOP and "COOP" not in knobs and ({"SPLIT", "WAVE"} & set(knobs)):   # COOP only where it is asked for
            return replace(self, COOP=0).retune(knobs)
        tuned = super().retune(knobs)
        if not tuned.COOP and tuned.REUSE is not None:   # the cooperative kernel's knob: unset elsewhere (no kernel
            tuned = replace(tuned, REUSE=None)            # reads it; the search sets its dtype's default there)
        return replace(tuned, persistent=False) if tuned.SPLIT else tuned


def pointwise_work_sizes(gen: Generalized, group: FusionGroup) -> dict[str, int]:
    """{"numel"}, and {"permuted": 1} where a load may be permuted against the output (`permuted_read`): the
    search then also times the 2-D tile's knobs (tile2d, YBLOCK)."""
    return {"numel": prod(group.space), **({"permuted": 1} if permuted_read(gen, group) else {})}


def permuted_read(gen: Generalized, group: FusionGroup) -> bool:
    """Whether pointwise `group` has a load permuted against its output (FusedWriter.permuted_read) in the graph
    as captured or with the channels-last layouts its convolutions' outputs may keep (memory_format.py): the
    work sizes see the captured graph, the writer the layout the library schedule chose."""
    probe = PointwiseSchedule()
    if FusedWriter(gen, group, probe, {}, "probe").permuted_read():
        return True
    kept = _kept_view(gen, group)
    return kept is not gen and FusedWriter(kept, group, probe, {}, "probe").permuted_read()


def reduction_work_sizes(gen: Generalized, group: FusionGroup) -> dict[str, int]:
    """{"R", "X"}: rows of R reduced (search/families.py's reduction_space), and {"strided": 1} where the reduced
    axes are not the innermost (the space then offers wider tiles and seeds them: families.strided_seeds), in the
    graph as captured or with the channels-last layouts its convolutions' outputs may keep (memory_format.py), as
    permuted_read asks: the work sizes see the captured graph, the writer the layout the library schedule chose."""
    strided = _rows_contiguous(group, memory_order(gen, group)) or \
        _rows_contiguous(group, memory_order(_kept_view(gen, group), group))
    return {**row_sizes(group.space, group.reduce_axes), **({"strided": 1} if strided else {})}


def _kept_view(gen: Generalized, group: FusionGroup) -> Generalized:
    """`gen` with the output of every convolution `group` reads that may stay channels-last (memory_format's
    kept_layout) read by its physical strides; `gen` itself where there is none."""
    read = {v.base for name in group.nodes for v in gen.graph.node(name).operands} - set(group.nodes)
    producers = [n for n in gen.graph.nodes if n.name in read]
    return relayout(gen, tuple(lay for lay in (kept_layout(gen, n) for n in producers) if lay is not None))


def memory_order(gen: Generalized, group: FusionGroup) -> tuple[int, ...]:
    """The axes of `group`'s space from outermost to innermost in memory, as its full-size loads from outside the
    group lay them out where they all agree and the group writes nothing full-size (a reduction's statistics or
    pooled rows), else as written (0, 1, ..., n - 1). A library convolution's output kept channels-last
    (memory_format.py), read by BatchNorm's statistics over (N, D, H, W), is (0, 2, 3, 4, 1): the channels, the
    rows, are the contiguous axis, so the reduction is strided, not the NCDHW rows of D x H x W contiguous
    elements the written order says. level-2 77 (ConvTranspose3d, BatchNorm, global average pool) on the H200
    (2026-12-06, benchmarks/data/h200_2026-12-06f): both groups were tiled as written over the NDHWC buffer, one
    row (a channel, 512 bytes apart) a program, and its module ran 6917 us against torch.compile's 4447."""
    written = tuple(range(len(group.space)))
    members, numel = set(group.nodes), prod(group.space)
    if any(prod(gen.graph.node(o).out.shape) == numel for o in group.outputs if o in members):
        return written
    orders = set()
    for name in group.nodes:
        for v in gen.graph.node(name).operands:
            if v.base in members or tuple(v.shape) != tuple(group.space):
                continue
            sized = [k for k, n in enumerate(v.shape) if n != 1]
            if any(v.strides[k] == 0 for k in sized):
                continue   # a broadcast operand (a per-channel weight) orders nothing
            orders.add(tuple(sorted(sized, key=lambda k: (-abs(v.strides[k]), k))))
    if len(orders) != 1:
        return written
    order = orders.pop()
    return tuple(k for k in written if k not in order) + order


def _sized_axes(group: FusionGroup, order: tuple[int, ...] | None = None) -> tuple[list[int], list[int]]:
    """(kept, reduced) positions in memory (`order`: memory_order's, default as written) of `group`'s axes longer
    than 1: an axis of one element orders nothing in memory, so the layout rules below skip it (InstanceNorm2d over
    x.unsqueeze(1).unsqueeze(1) reduces (1, B, 1, F) over axes 0, 2, 3: rows of F contiguous elements, which
    counting axis 0 took for a strided reduction)."""
    order = order if order is not None else tuple(range(len(group.space)))
    sized = [k for k in order if group.space[k] != 1]
    kept = [i for i, k in enumerate(sized) if k not in group.reduce_axes]
    return kept, [i for i, k in enumerate(sized) if k in group.reduce_axes]


def _trailing(group: FusionGroup, order: tuple[int, ...] | None = None) -> bool:
    """Whether `group` reduces its innermost axes in memory (rows contiguous along the reduced axes), axes of one
    element aside."""
    kept, reduced = _sized_axes(group, order)
    return not kept or not reduced or max(kept) < min(reduced)


def _rows_contiguous(group: FusionGroup, order: tuple[int, ...] | None = None) -> bool:
    """Whether `group` keeps its innermost axis in memory (axes of one element aside): the rows are the contiguous
    direction and every reduced axis is strided (a max over the middle axis; not BatchNorm's statistics over (N,
    H, W), contiguous along W; but those statistics over a channels-last buffer, memory_order)."""
    kept, reduced = _sized_axes(group, order)
    return bool(reduced) and bool(kept) and max(kept) > max(reduced)


def default_schedule(gen: Generalized, group: FusionGroup) -> PointwiseSchedule | ReductionSchedule:
    """A reasonable schedule without search: persistent rows up to 32K elements (several a program where they are
    short: short_rows_xblock), else 4K chunks; a whole-tensor
    reduction of 64K elements or more split over 512 programs; rows of WINDOWED_MIN_R elements or more with a
    full-size output (a second pass over the row) a windowed split (windowed_schedule)."""
    if group.family == "pointwise":
        return PointwiseSchedule(XBLOCK=1024, num_warps=4)
    r = 1
    for k in group.reduce_axes:
        r *= group.space[k]
    rows = max(1, prod(group.space) // max(r, 1))
    rblock = 1 << max(0, (r - 1).bit_length())
    trailing = _trailing(group, memory_order(gen, group))
    if rows == 1 and r >= 1 << 16 and (split_possible(gen, group) or split_rows_possible(gen, group)):
        return ReductionSchedule(XBLOCK=1, RBLOCK=2048, SPLIT=512, persistent=False, num_warps=8)
    if trailing and rows > 1 and r >= WINDOWED_MIN_R and split_rows_possible(gen, group) \
            and _rereads_rows(gen, group):
        return windowed_schedule(r)
    if not trailing:  # rows are strided across the reduced axes: tile many rows for coalescing
        block = min(rblock, 64)
        xblock = _strided_xblock(gen, group, block)
        split = strided_split(rows, xblock, r, block) if split_rows_possible(gen, group) else 0
        return ReductionSchedule(XBLOCK=xblock, RBLOCK=block, persistent=rblock <= 64 and not split, SPLIT=split,
                                 num_warps=8)
    if rblock <= 32768:
        xblock = short_rows_xblock(rows, rblock)
        return ReductionSchedule(XBLOCK=xblock, RBLOCK=rblock, persistent=True,
                                 num_warps=max(1, min(16, xblock * rblock // 256)))
    return ReductionSchedule(XBLOCK=1, RBLOCK=4096, persistent=False, num_warps=8)


def short_rows_xblock(rows: int, rblock: int) -> int:
    """Rows a persistent program takes by default: one for rows of SHORT_ROWS_TILE elements or more, else as many as
    fill SHORT_ROWS_TILE (at most the search space's bound, short_rows_top, and the rows there are). One short row a
    program leaves the memory system idle: 62_Matmul_GroupNorm's norm, 524,288 rows of 16, was 524,288 one-warp
    programs with 64 B in flight each (the cost model's bytes-in-flight term, costmodel/analytical.py), and 16,384 of
    them at the small variant took 165 s of the referee's 300 under Triton's interpreter, which pays per program.
    Measured on the H100 (2026-12-05, benchmarks/data/h100_2026-12-05d, fp32 sum): 2,097,152 rows of 16, one row a
    program 1266.9 us, 64 rows on 4 warps 58.1 (1.23x the floor; eager 222.9); 524,288 rows of 64: 320.3 -> 56.9."""
    if rblock >= SHORT_ROWS_TILE:
        return 1
    return max(1, min(short_rows_top(rblock), 1 << max(0, (rows - 1).bit_length()), SHORT_ROWS_TILE // rblock))


STRIDED_SPLIT_MIN_R = 1 << 14   # strided rows this long or longer are split where their row blocks are few


def strided_split(rows: int, xblock: int, r: int, rblock: int) -> int:
    """SPLIT of the strided default: 0, or where rows of at least STRIDED_SPLIT_MIN_R elements leave fewer than
    WAVE_PROGRAMS row blocks of `xblock`, the power of two that brings the programs to WAVE_PROGRAMS (at most 1024,
    every program at least one `rblock` chunk: splitrows.py's partials, then the combining pass). BatchNorm's
    statistics over 128 channels are two row blocks of 64 (level-2 77): two programs read the whole tensor."""
    blocks = -(-rows // xblock)
    if r < STRIDED_SPLIT_MIN_R or blocks >= WAVE_PROGRAMS:
        return 0
    split = 1 << max(0, (-(-WAVE_PROGRAMS // blocks) - 1).bit_length())
    while split > 1 and split * rblock > r:
        split //= 2
    return min(split, 1024) if split > 1 else 0


STRIDED_REGISTERS = 128   # registers a thread of the strided default may take, predicted (looped_registers' rule)


def _strided_xblock(gen: Generalized, group: FusionGroup, rblock: int) -> int:
    """XBLOCK of the strided default (64 rows x 64 on 8 warps): 64, halved while a thread would hold more than
    STRIDED_REGISTERS registers. On the H200 (benchmarks/strided_probe.py, 2026-12-04e call 3, (128, 4096, 4095)
    over the middle axis) this tile beat 256 x 16 on 8 warps (every warp across the rows, a thread reducing its own
    16; fewer registers and instructions an element, cross-compiled) on every case: bf16 max 1178 vs 1324 us, sum
    1184 vs 1322, argmin 1542 vs 2033; fp32 max 2104 vs 2312, argmin 2101 vs 2547. A concatenation of p pieces in
    the group is p masked tile-sized loads live at once beside LOOPED_TILES_LIVE: DenseNet121's BatchNorm
    statistics over 25 pieces (level-3 15, triton 3.6.0, cross-compiled 2026-12-04) took 241 VGPRs on gfx942
    (predicted 16 + 28 x 8 = 240), with 619 SGPRs spilled to VGPR lanes, and spilled 12.8 KB on sm_90 (16 values a
    thread: 464 predicted, over 255)."""
    pieces = max((len(getattr(gen.graph.node(n), "cat_sizes", ())) for n in group.nodes), default=0)
    xblock = 64
    while xblock > 1 and 16 + (LOOPED_TILES_LIVE + pieces) * xblock * rblock // 256 > STRIDED_REGISTERS:
        xblock //= 2
    return xblock


WINDOWED_MIN_R = 1 << 16     # rows from 64K elements on: windowed split rows by default
WINDOW_BYTES = 4 << 20       # a wave's rows at 4 bytes an element (two waves between a row's reads: 8 MiB)
WAVE_PROGRAMS = 256          # programs a wave has at least (about two per SM or CU on 132 to 304 of them)


def windowed_schedule(r: int) -> ReductionSchedule:
    """Windowed split rows (splitrows.py) for rows of `r` elements, without a target: WAVE one-row blocks of at most
    WINDOW_BYTES (two waves, 8 MiB, fit every target's cache with room: H200's 60 MiB L2, MI300X's 256 MiB
    Infinity Cache, MI250X's 8 MiB L2 per GCD only just), SPLIT chunks of about 8K elements per row, raised until a
    wave has WAVE_PROGRAMS programs (chunks of 2K at least), RBLOCK the tile of {512, 1024, 2048} that pads the
    chunk least. Why from 64K elements: a looped program per row keeps its row for the second pass only while the
    rows in flight fit the cache, and at 256 KB a row they do not (132 SMs x ~4 programs x 256 KB = 135 MB >
    60 MiB): 39_L2Norm_, 32,768 rows of 65,535, ran at 2.17x its floor on the H200; the search decides per target
    (search/families.py's row_waves)."""
    row_bytes = 4 * r
    wave = 1 << max(0, (WINDOW_BYTES // row_bytes).bit_length() - 1) if row_bytes <= WINDOW_BYTES else 1
    top = max(2, 1 << max(1, (r // 2048).bit_length() - 1))   # chunks of 2048 elements at least
    split = min(top, max(2, 1 << max(1, (r // 8192 - 1).bit_length())))
    while wave * split < WAVE_PROGRAMS and split < top:
        split *= 2
    chunk = -(-r // split)
    rblock = min((512, 1024, 2048), key=lambda b: (-(-chunk // b) * b, -b))
    return ReductionSchedule(XBLOCK=1, RBLOCK=rblock, SPLIT=split, WAVE=wave, persistent=False, num_warps=8)


def _rereads_rows(gen: Generalized, group: FusionGroup) -> bool:
    """Whether `group` has a full-size output (its rows are read a second time to write it) and its row is one
    contiguous axis. A row of several reduced axes that loads index separately (GroupNorm's per-channel affine)
    keeps the looped default: its second pass loops over the channel as a scalar, where a split's chunk divides
    every element's index to find it (tests/test_codegen_fused.py's test_groupnorm_is_one_kernel)."""
    w = _probe(gen, group)
    return len(w.space.axes) == 1 and any(w.level[n.name] == "full" for n in w.outputs())


def generate_fused(gen: Generalized, group: FusionGroup, schedule: PointwiseSchedule | ReductionSchedule,
                   host_names: dict, kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for `group` under `schedule`."""
    if group.family not in ("pointwise", "reduction") or schedule.family != group.family:
        raise CodegenUnsupported(f"{group.name} is a {group.family} group, not one for a {schedule.family} schedule")
    writer = FusedWriter(gen, group, schedule, host_names, kernel_name)
    if group.family == "reduction" and schedule.SPLIT and (writer.many_rows() or not split_possible(gen, group)):
        # few rows, or one row that split.py cannot take (a full-size output: x / norm(x)): splitrows.py
        return _split_rows(gen, group, schedule, host_names, kernel_name)
    kernel = writer.write()
    tiles = writer.tile_mode()
    if tiles:   # coordinates were needed: walk [rows, last axis] tiles instead, dividing row indices only
        writer = FusedWriter(gen, group, schedule, host_names, kernel_name, tiled=tiles)
        kernel = writer.write()
    if group.family == "reduction" and not schedule.persistent and writer.many_rows():
        kernel = replace(kernel, long_rows=_long_rows(gen, group, writer, host_names, kernel_name))
    elif group.family == "reduction" and schedule.persistent:
        kernel = replace(kernel, long_rows=_looped_form(gen, group, writer, host_names, kernel_name))
    return kernel


PERSISTENT_ROWS_MAX = 32768   # a persistent reduction's call of rows longer than this and than traced runs its looped
LOOPED_SCHEDULE = ReductionSchedule(XBLOCK=1, RBLOCK=4096, persistent=False, num_warps=8)   # form (default_schedule's)


def _looped_form(gen: Generalized, group: FusionGroup, writer: FusedWriter, host_names: dict,
                 kernel_name: str) -> LongRowSplit | None:
    """A persistent reduction's looped form under LOOPED_SCHEDULE, with its own long-row split where it has one
    (kernel.py's LongRowSplit, without a row-count condition), or None where the group has no looped form. A
    persistent block holds the whole row: a call of rows far longer than traced would compile and run a block sized
    to them (2^17 elements a program at level-2 11's stretched GroupNorm, past the referee's allowance)."""
    try:
        looped = generate_fused(gen, group, LOOPED_SCHEDULE, host_names,
                                kernel_name.removesuffix("_kernel") + "_looped_kernel")
    except CodegenUnsupported:
        return None
    traced = prod(group.space[k] for k in group.reduce_axes)
    return LongRowSplit(looped, writer.rows, writer.at.reduced_size(), writer.schedule.XBLOCK, None,
                        persistent_rows_max(traced))


def persistent_rows_max(traced: int) -> int:
    """The row length past which a persistent reduction's call runs its looped form: PERSISTENT_ROWS_MAX, or the
    traced row where longer (a call at the traced sizes runs the schedule the search chose)."""
    return max(PERSISTENT_ROWS_MAX, traced)


LONG_ROWS_PROGRAMS = 128   # a looped reduction's call of fewer row blocks than this (about a GPU's SMs or CUs) ...
LONG_ROWS_MIN = 1 << 20     # ... and rows longer than this and than traced runs its long-row split (LongRowSplit)
LONG_ROWS_SCHEDULE = ReductionSchedule(XBLOCK=1, RBLOCK=2048, SPLIT=256, persistent=False, num_warps=8)


def _long_rows(gen: Generalized, group: FusionGroup, writer: FusedWriter, host_names: dict,
               kernel_name: str) -> LongRowSplit | None:
    """The looped reduction's split-row form under LONG_ROWS_SCHEDULE (codegen/kernel.py's LongRowSplit), or None
    where splitrows.py cannot take the group (its writers raise CodegenUnsupported). SPLIT 256 a row at most: per
    call, no more programs a row than the row has RBLOCK tiles (splitrows.py's per_call_split), so a row past
    LONG_ROWS_MIN gets 256, and the partials are at most 256 a row and statistic."""
    try:
        name = kernel_name.removesuffix("_kernel") + "_split_kernel"
        split = _split_rows(gen, group, LONG_ROWS_SCHEDULE, host_names, name)
        row = writer.at.reduced_size()
    except CodegenUnsupported:
        return None
    traced = prod(group.space[k] for k in group.reduce_axes)
    return LongRowSplit(split, writer.rows, row, writer.schedule.XBLOCK, LONG_ROWS_PROGRAMS, long_rows_min(traced))


def long_rows_min(traced: int) -> int:
    """The row length past which a call of few rows takes the long-row split: LONG_ROWS_MIN, or the traced row
    where longer."""
    return max(LONG_ROWS_MIN, traced)


def _split_rows(gen: Generalized, group: FusionGroup, schedule: ReductionSchedule, host_names: dict,
                kernel_name: str) -> GeneratedKernel:
    """A split-row reduction (splitrows.py): the partials kernel runs before the group's own kernel; with WAVE > 0
    one kernel does both, wave by wave; with COOP = 1 one cooperative kernel, each program reading its chunk once."""
    if schedule.WAVE:
        return FusedWriter(gen, group, schedule, host_names, kernel_name, phase="windowed").write()
    if schedule.COOP:
        return FusedWriter(gen, group, schedule, host_names, kernel_name, phase="cooperative").write()
    partials_name = kernel_name.removesuffix("_kernel") + "_partials_kernel"
    first = FusedWriter(gen, group, schedule, host_names, partials_name, phase="partials").write()
    second = FusedWriter(gen, group, schedule, host_names, kernel_name, phase="normalise").write()
    return replace(second, before=(first,))


def _probe(gen: Generalized, group: FusionGroup) -> FusedWriter:
    """A writer of `group` under a one-element split schedule, to ask what a split could compute (it writes nothing)."""
    return FusedWriter(gen, group, ReductionSchedule(XBLOCK=1, RBLOCK=1, persistent=False), {}, "probe")


def split_rows_possible(gen: Generalized, group: FusionGroup) -> bool:
    """Whether `group`'s rows can be split over programs with partials (splitrows.py's split_plan): the path of
    one long row with a full-size output, which split.py refuses (KernelBench's x / norm(x): one program walked
    1.9e9 elements, 994 ms on the H200 against torch.compile's 2.6 ms)."""
    try:
        split_plan(_probe(gen, group))
    except CodegenUnsupported:
        return False
    return True


def split_possible(gen: Generalized, group: FusionGroup) -> bool:
    """Whether `group` can be generated as a split (whole-tensor) reduction."""
    try:
        return not why_not_split(_probe(gen, group))
    except CodegenUnsupported:
        return False
