"""Triton source for a pooling group: max or average pooling over 1-3 spatial axes of (N, C, *spatial),
plus its pointwise epilogue, and a pointwise prologue where the plan gave it one (FusionGroup.prologue).

Iteration: each program computes a YBLOCK x XBLOCK tile of the output seen as rows (n, c, o_1..o_{d-1},
flattened) x the last output axis o_d, on a 2-D grid. Only the YBLOCK row indices are unravelled into
(n, c, o_1..o_{d-1}) (integer division by run-time sizes costs tens of instructions, and a flat 1-D tile
paid it three times per element: the bf16 pools ran 2.2x behind torch.compile on the H200). Then it walks
the kernel window (unrolled: the window is a structural constant) with masked loads: padding is outside
the input, so it reads -inf for max and is left out of an average's sum; the
divisor counts the padded window (count_include_pad) or only the elements inside the input, as PyTorch's
kernels do. Accumulation is fp32; max propagates NaN like torch.

Where the window's loads step by 1 along C and by C along the last axis (a library convolution's output kept
channels-last, codegen/memory_format.py, read directly or by a prologue), the rows are ordered (n, o_1.., c), c the
fastest, and the tile has at most CHANNEL_TILE_COLS columns: a tile's loads are then contiguous along its rows
(vector loads along C; the rows (n, c, o_1..) stepped 2C apart between lanes, one 32-bit load per line) and its
stores along its columns, Triton converting between the two layouts; the store's flat NCHW position is rebuilt
from the coordinates (the pointwise writer's tile2d for the same reads: memory_format.permuted_axes says both).

A prologue (a convolution's bias + activation before the pool) is computed on each window element instead
of loaded: its members read their own inputs at the window position, under the window's mask, and the
value is then taken only where that mask holds, since padding lies outside the prologue's output (-inf to a
max, nothing to an average, never prologue(0)). Its loads that do not move over the window (a per-channel
bias, a scalar parameter) are hoisted above the window loop. Overlapping windows recompute it; the plan
bounds how often.

The sliding schedule (PoolSchedule.ROWS > 1; the default is 1, the above) is for windows that overlap along the
second-to-last spatial axis, where one output row per program loads each input element up to kh times (KernelBench
42, MaxPool2d 4x4 at stride 1: 16 masked loads per output, instruction bound at 3.7x the memory floor on an H200).
A program takes ROWS consecutive output rows along that axis (the grid's first axis: blocks of YBLOCK rows of the
axes before it x groups of ROWS output rows), for the same YBLOCK x XBLOCK tile of the other axes. Each input row
those rows read (`sliding_rows`: (ROWS - 1) x stride + (kh - 1) x dilation + 1 of them, fewer where a stride skips
some) is loaded once along the last axis's window and reduced to h (max or sum), which folds into acc<r> of every
output row r that reads it; then each output row is divided (an average), goes through the epilogue and is stored
under its own mask (the last group's rows past the output are masked; the input rows they alone read are masked
against the input's end). Loads per output drop from kh x kw to about ((ROWS - 1) x s + kh) x kw / ROWS. The rows are
unrolled at generation time (explicit acc<r>, h); a 3-d pool's depth window loops around them. Padding, the divisor,
ceil mode, NaN propagation and a prologue (computed on each loaded element) work as above. A window whose unrolled
loads per step would exceed SLIDE_LOAD_LIMIT is refused (CodegenUnsupported), so the search drops that config.

The span schedule (PoolSchedule.SPAN = 1) is for windows that overlap along the last axis (KernelBench 41: 8 taps at
dilation 3, stride 1; 44: 8 taps at stride 1), where each output's k masked loads of one element each are shifted by
amounts that no vector load can take (unaligned, and masked per element): 8 scalar loads per output, the kernel
at 2.2x its memory floor on an H200 (3101 us against 1416). Instead a lane group owns V consecutive outputs of a row
whose inputs start at an aligned chunk of C = 16 bytes / the element size input elements, with C = V x stride
(`span_taps`: the stride must divide a chunk). The group loads each chunk its outputs' taps reach (`span_chunks`:
KernelBench 41 in fp32 reads chunks -1..5 for 4 outputs) once, as one 16-byte load masked per element against the
input's ends (-inf or 0 outside, as above; where the row length is a multiple of 16 Triton's launch
specialization makes the mask uniform over a chunk and the load one vector load), splits it into its C values
(tl.reshape + tl.split, register renaming where a lane holds the whole chunk), folds each output's taps into its
accumulator acc<e>, and joins the V accumulators back (tl.join + tl.reshape) into the YBLOCK x XBLOCK tile that the
divisor, the epilogue and the store use as before. The outer window axes of a 2-d or 3-d pool loop around it.
Cross-compiled at KernelBench 41's sizes it issues 14 128-bit loads where the window issued 64 32-bit ones (sm_90;
7 for 32 on gfx942) and about 40% fewer PTX instructions. A lane must hold whole chunks: with fewer lane groups
than lanes Triton spreads a chunk over two lanes and the split goes through shared memory, so the default takes
num_warps with at least SPAN_LANES groups per warp. Not with a prologue (computed per window element); ROWS > 1 is the
sliding schedule, which reads its windows itself.

Output sizes are derived dims (`Dim(-1, axis, node=<pool>)`): ModelNew.forward computes them from the
input's runtime shape with PyTorch's formula (`host_size_lines`), floor or ceil mode, including the rule
that the last window must start inside the input or its left padding.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen.anchor import AnchorWriter, mentions
from kerntailor.codegen.assemble import one_dim
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis
from kerntailor.codegen.memory_format import kept_layout, permuted_axes
from kerntailor.codegen.render import ExprRenderer
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import SizeArgs, const, is_whole, product, quotient, same
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Pool
from kerntailor.ir.types import contiguous_strides
from kerntailor.plan.fusion import FusionGroup, regrouped
from kerntailor.search.families import (
    POOL_ROWS,
    SLIDE_LOAD_LIMIT,
    SPAN_LANES,
    itemsize,
    sliding_rows,
    span_chunks,
    span_outputs,
    span_taps,
)

UNROLL_LIMIT = 64  # windows up to this many elements are unrolled; larger ones loop


def derived_dim(node: Pool, axis: int) -> Dim:
    return Dim(-1, axis, node.name)


def output_shape(gen: Generalized, node: Pool) -> list[SizeExpr]:
    """The pool's output shape as size expressions: N and C of its input, then the derived spatial dims
    (computed on the host by `host_size_lines`)."""
    shape = [gen.expr(("node", node.name, "operand", 0, "shape", k), s)
             for k, s in enumerate(node.operands[0].shape[:2])]
    return shape + [SizeExpr(Fraction(1), ((derived_dim(node, k), Fraction(1)),))
                    for k in range(2, len(node.out.shape))]


def derived_host_names(gen: Generalized) -> dict[Dim, str]:
    """Host variable names for every pool's output spatial sizes (whether or not gen.dims uses them)."""
    names = {}
    for node in gen.graph.nodes:
        if isinstance(node, Pool):
            for k in range(2, len(node.out.shape)):
                names[derived_dim(node, k)] = f"{node.name}_o{k}"
    return names


def host_size_lines(gen: Generalized, node: Pool, axis: int, name: str, sizes: SizeArgs) -> list[str]:
    """Host Python lines that set `name` to output size `axis` of `node`, by PyTorch's
    pooling_output_shape, from the input's runtime size along that axis."""
    if axis < 2:
        e = gen.expr(("node", node.name, "operand", 0, "shape", axis), node.operands[0].shape[axis])
        return [f"{name} = {sizes.host(e)}"]
    d = axis - 2
    size = sizes.host(gen.expr(("node", node.name, "operand", 0, "shape", axis), node.operands[0].shape[axis]))
    k, s, p, dil = _window(gen, node, d)
    c = 2 * p - dil * (k - 1) - 1 + (s - 1 if node.ceil_mode else 0)
    if s == 1:
        c += 1
        formula = f"{size} + {c}" if c > 0 else f"{size} - {-c}" if c < 0 else size
    else:
        top = f"{size} + {c}" if c > 0 else f"{size} - {-c}" if c < 0 else size
        formula = f"({top}) // {s} + 1"
    if node.ceil_mode:
        return [f"{name} = {formula}",
                f"{name} = {name} - 1 if ({name} - 1) * {s} >= {size}{f' + {p}' if p else ''} else {name}  "
                "# the last window starts inside the input"]
    return [f"{name} = {formula}"]


def _window(gen: Generalized, node: Pool, d: int) -> tuple[int, int, int, int]:
    """(kernel, stride, padding, dilation) along spatial axis d: structural constants."""
    out = []
    for field, values in (("kernel", node.kernel), ("stride", node.stride), ("padding", node.padding),
                          ("dilation", node.dilation or (1,) * len(node.kernel))):
        e = gen.expr(("node", node.name, field, d), values[d])
        if not e.is_constant:
            raise CodegenUnsupported(f"{node.name}: the pooling {field} changes with the input sizes")
        out.append(int(e.evaluate({})))
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class PoolSchedule(Schedule):
    """About XBLOCK output elements per program: a (YBLOCK rows x XBLOCK columns) tile (`tile_shape`)."""

    family: ClassVar[str] = "pool"
    order: ClassVar[tuple[str, ...]] = ("XBLOCK", "ROWS", "SPAN", "num_warps", "num_stages", "waves_per_eu")
    shown: ClassVar[tuple[str, ...]] = ("XBLOCK", "num_warps")

    XBLOCK: int
    ROWS: int = 1     # output rows along the second-to-last axis per program, sharing their input rows (sliding)
    SPAN: int = 0     # 1: the last axis's window from aligned chunks of the input, shared by V outputs (span);
    #                   with ROWS = 1 (ROWS > 1 is the sliding schedule, which reads its windows itself)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.power_of_two("XBLOCK")
        self.one_of("ROWS", POOL_ROWS)
        self.one_of("SPAN", (0, 1))


def work_sizes(gen: Generalized, group: FusionGroup) -> dict[str, int]:
    """{"numel"}: the pool's outputs (search/families.py's pool_space), whatever its prologue's shape; its window's
    elements (window, KW along the last axis) and, with two or more spatial axes, along the second-to-last one (KH
    elements, stride SH, dilation DH, over OH output rows): what the sliding schedule (ROWS > 1) shares and the cost
    model counts; along the last axis its stride SW, dilation DW, padding PW and OW outputs, the input's bytes per
    element (ITEM) and whether a prologue computes it: what the span schedule (SPAN=1) needs."""
    node = gen.graph.node(group.anchor)
    sizes = {"numel": node.out.numel, "window": prod(node.kernel), "KW": node.kernel[-1] if node.kernel else 1}
    dilation = node.dilation or (1,) * len(node.kernel)
    if len(node.kernel) >= 2 and len(node.out.shape) == len(node.kernel) + 2:
        sizes |= {"KH": node.kernel[-2], "SH": node.stride[-2], "DH": dilation[-2], "OH": node.out.shape[-2]}
    if node.kernel and len(node.out.shape) == len(node.kernel) + 2:
        sizes |= {"SW": node.stride[-1], "DW": dilation[-1], "PW": node.padding[-1], "OW": node.out.shape[-1],
                  "ITEM": itemsize(gen.graph.buffer_type(node.operands[0].base).dtype),
                  "prologue": int(bool(group.prologue))}
    return sizes


def default_schedule(gen: Generalized, group: FusionGroup) -> PoolSchedule:
    """4 outputs per lane of 4 warps for small windows; fewer where a big unrolled window would keep too
    many loads in flight (a 3x3x3 window at 1024 spills SGPRs on gfx942), and half as many with a prologue
    (tanh(scale·x) + 1 on a 3x3 window at 1024 spilled 14 registers on gfx942)."""
    node = gen.graph.node(group.anchor)
    window = prod(node.kernel) if node.kernel else 1
    xblock = 1024 if window <= 9 else 512 if window <= 32 else 256
    if group.prologue:
        xblock //= 2
    xblock = max(64, min(xblock, 1 << max(0, (node.out.numel - 1).bit_length())))
    v = span_default(gen, group, xblock)
    if v:
        return PoolSchedule(XBLOCK=xblock, SPAN=1, num_warps=max(1, min(4, xblock // v // SPAN_LANES)))
    return PoolSchedule(XBLOCK=xblock, num_warps=4)


def span_default(gen: Generalized, group: FusionGroup, xblock: int) -> int:
    """V (outputs per lane group) where the default takes the span schedule at `xblock`: where the search offers it
    (search/families.py's pool_space), the tile has a column per output of a lane group, and the input's rows are
    contiguous and start at whole chunks at the traced sizes (the chunk loads are then aligned vector loads where
    Triton's launch specialization sees the sizes as multiples of 16; elsewhere, a chunk is spread over lanes
    and split through shared memory: sm_90, KernelBench 41 at an odd length, 33 barriers); not where the input is
    a convolution's output that may stay channels-last (memory_format.py: its last axis then steps by C). Else 0.
    Cross-compiled for sm_90 and gfx942 it issues 4-13x fewer loads and half the instructions of the window of
    masked loads on KernelBench 41 and 44 (benchmarks/pool_probe.py times both)."""
    sizes = work_sizes(gen, group)
    if "ITEM" not in sizes or sizes["prologue"]:
        return 0
    v = span_outputs(sizes["ITEM"], sizes["KW"], sizes["SW"], sizes["PW"], sizes["DW"])
    if not v:
        return 0
    node = gen.graph.node(group.anchor)
    view = node.operands[0]
    chunk = v * sizes["SW"]
    producer = next((n for n in gen.graph.nodes if n.name == view.base), None)
    aligned = view.strides[-1] == 1 and all(st % chunk == 0 for st in (*view.strides[:-1], view.offset))
    if not aligned or (producer is not None and kept_layout(gen, producer) is not None):
        return 0
    return v if tile_shape(node, xblock)[1] >= v and xblock // v >= SPAN_LANES else 0


CHANNEL_TILE_COLS = 32   # channel-inner rows (a channels-last input): at most this many columns, the rest channels


def tile_shape(node: Pool, xblock: int, channels_inner: bool = False) -> tuple[int, int]:
    """(YBLOCK, XBLOCK) of a program's output tile for `xblock` elements per program: columns of the last
    output axis up to its traced length (a power of two), rows for the rest (masks cover other shapes); with
    `channels_inner` at most CHANNEL_TILE_COLS columns, so that the rows span channels (the loads' contiguous
    axis)."""
    last = node.out.shape[-1]
    cols = max(1, min(xblock, CHANNEL_TILE_COLS if channels_inner else xblock, 1 << max(0, (last - 1).bit_length())))
    return max(1, xblock // cols), cols


def generate_pool(gen: Generalized, group: FusionGroup, schedule: PoolSchedule, host_names: dict,
                  kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for a pool group under `schedule`."""
    if group.family != "pool":
        raise CodegenUnsupported(f"{group.name} is a {group.family} group")
    writer = _PoolWriter(gen, group, schedule, host_names, kernel_name)
    writer.nan_max = arch is not None and arch.startswith("sm_")
    return writer.write()


class _PoolWriter(AnchorWriter):
    anchor_type = Pool
    takes_prologue = True

    def write(self) -> GeneratedKernel:
        pool: Pool = self.anchor
        if pool.kind not in ("max", "avg"):
            raise CodegenUnsupported(f"{pool.kind} pooling")
        nd = len(pool.kernel)
        rank = len(pool.out.shape)
        if rank != nd + 2 or len(pool.operands[0].shape) != rank:
            raise CodegenUnsupported(f"{pool.name}: pooling of rank {rank} over {nd} spatial axes "
                                     "(only (N, C, *spatial) inputs)")
        view_parts = self.view_exprs(pool, 0)
        if self.prologue:
            self._check_prologue(pool, view_parts[1])
        space = output_shape(self.gen, pool)
        if product(space) is None:
            raise CodegenUnsupported("output size is not a product of sizes")
        windows = [_window(self.gen, pool, d) for d in range(nd)]
        acc = "tl.float64" if self.graph.buffer_type(view_parts[0].base).dtype == "fp64" else "tl.float32"
        if self.schedule.ROWS > 1:   # the sliding schedule reads its rows' windows itself: SPAN is for ROWS=1
            return self._write_sliding(pool, space, windows, view_parts, acc)
        channels_inner = rank > 3 and self._channels_inner(view_parts)
        rows, cols = tile_shape(pool, self.schedule.XBLOCK, channels_inner)
        n_rows = product(space[:-1])
        if n_rows is None:
            raise CodegenUnsupported("output rows are not a product of sizes")
        self._tile(rank, space, n_rows, channels_inner)
        if not self.prologue:  # else the window's values are computed, not loaded
            self._input_base(*view_parts)
        in_sizes = [self.sizes.text(view_parts[1][2 + d]) for d in range(nd)]
        if self.schedule.SPAN:
            if self.prologue:
                raise CodegenUnsupported(f"{pool.name}: SPAN=1 loads the input itself (a prologue is computed per "
                                         "window element)")
            self._reduce_span(pool, windows, in_sizes, view_parts, acc, n_rows, cols)
        else:
            self._reduce_window(pool, windows, in_sizes, view_parts, acc)
        value = "acc" if pool.kind == "max" else f"acc / {self._divisor(pool, windows, in_sizes, acc)}"
        self.out(f"v_{pool.name} = {value}  # {pool.describe()}")
        self.compute_epilogue()
        self.store_outputs(space)
        shape_text = " x ".join(self.sizes.host(e) for e in space)
        doc = (f"{pool.describe()} -> ({shape_text}): {', '.join(self.group.nodes)}. "
               "A YBLOCK x XBLOCK tile of (rows x last axis) per program; "
               + ("the last axis's window from aligned chunks of the input, shared by a lane group's outputs."
                  if self.schedule.SPAN else "masked loads over the window."))
        # a 2-D launch, rows x column blocks: no per-element division in the kernel
        return self.finish(doc, [("YBLOCK", rows), ("XBLOCK", cols)], (one_dim(n_rows, rows), one_dim(space[-1], cols)))

    def _tile(self, rank: int, space, n_rows, channels_inner: bool = False) -> None:
        """yindex: the tile's rows (n, c, o_1..), unravelled; i<last>: its columns; xindex: the flat position.
        `channels_inner`: the rows in the order (n, o_1.., c), c the fastest, so that a tile's loads are contiguous
        along its rows (a channels-last input) and its stores along its columns; Triton converts between the two
        layouts (the pointwise writer's tile2d for the same reads)."""
        last = self.sizes.text(space[-1])
        pid = "tl.program_id({}).to(tl.int64)" if self.big else "tl.program_id({})"
        order = "n, o_1.., c" if channels_inner else "n, c, o_1.."
        self.out(f"yindex = {pid.format(0)} * YBLOCK + tl.arange(0, YBLOCK)[:, None]  # rows: {order}")
        self.out(f"i{rank - 1} = {pid.format(1)} * XBLOCK + tl.arange(0, XBLOCK)[None, :]  # the last output axis")
        self.out(f"xmask = (yindex < {self.sizes.text(n_rows)}) & (i{rank - 1} < {last})")
        self.coords = {k: f"i{k}" for k in range(rank)}
        self.flat_index = "xindex"
        self.tile = "[YBLOCK, XBLOCK]"
        self.channels_inner = channels_inner   # q<k> below are not n·C + c: _input_base then takes n and c apart
        if channels_inner:
            axes = [0, *range(2, rank - 1), 1]
            self.unravel(axes, [space[k] for k in axes], "yindex")
            row = "i0"
            for k in range(1, rank - 1):
                row = f"({row} * {self.sizes.text(space[k])} + i{k})"
            self.out(f"xindex = {row} * {last} + i{rank - 1}  # the flat output position (n, c, o_1.., o_last)")
            return
        self.out(f"xindex = yindex * {last} + i{rank - 1}  # the flat output position")
        self.unravel(list(range(rank - 1)), space[:-1], "yindex")
        if rank == 3:  # one spatial axis: the row is n·C + c itself
            self.out("q2 = yindex")

    def _channels_inner(self, view_parts) -> bool:
        """Whether the window's loads step by 1 along C and by more along the last axis (memory_format.py's
        permuted_axes: a channels-last convolution output): the pool's input itself, or an input of its prologue
        read at the pool input's rank."""
        if not self.prologue:
            return permuted_axes(view_parts[0], view_parts[2], 1, -1)
        rank = len(self.anchor.out.shape)
        for node in self.prologue:
            for j, v in enumerate(node.operands):
                if v.base not in self.members and len(v.shape) == rank:
                    view, _, strides, _ = self.view_exprs(node, j)
                    if permuted_axes(view, strides, 1, -1):
                        return True
        return False

    def _input_base(self, view, in_shape, in_strides, in_offset) -> None:
        """base: where (n, c) starts in the input; n and c as one coordinate (q2 = n·C + c) where the input is
        contiguous over them."""
        merged = not getattr(self, "channels_inner", False) and \
            not (view.strides[1] == 0 and in_strides[1].is_constant) and \
            same(in_strides[0], product([in_shape[1], in_strides[1]]) or const(-1))
        terms = []
        if merged:
            terms.append(f"q2 * {self.sizes.text(in_strides[1])}")
        else:
            for k in (0, 1):
                if view.strides[k] == 0 and in_strides[k].is_constant:
                    continue
                st = self.sizes.text(in_strides[k])
                terms.append(f"i{k}" if st == "1" else f"i{k} * {st}")
        if not in_offset.is_constant or in_offset.coeff + in_offset.offset != 0:
            terms.append(self.sizes.text(in_offset))
        self.base_varies = any(mentions(t, c) for t in terms for c in ("q2", "i0", "i1"))
        self.out(f"base = {' + '.join(terms) or '0'}  # (n, c) in the input")

    def _reduce_window(self, pool: Pool, windows, in_sizes: list[str], view_parts, acc: str) -> None:
        """acc: the window's max or sum, over loops unrolled where the window is small; masked loads read -inf
        (max) or 0 (sum) outside the input, and a prologue's value is replaced by them there."""
        for d, (_, s, p, _) in enumerate(windows):
            start = f"i{2 + d} * {s}" if s != 1 else f"i{2 + d}"
            self.out(f"start{d} = {f'{start} - {p}' if p else start}")
        init = 'float("-inf")' if pool.kind == "max" else "0.0"
        self.out(f"acc = tl.full([YBLOCK, XBLOCK], {init}, {acc})")
        hoist_at = len(self.out.lines)
        hoisted: dict[str, str] = {}   # the prologue's loads that do not vary over the window: load text -> name
        loop = "tl.static_range" if prod(w[0] for w in windows) <= UNROLL_LIMIT else "range"
        with ExitStack() as loops:
            for d in range(len(windows)):
                self._window_step(pool, windows, in_sizes, d, loops, loop)
            self._window_value(pool, windows, view_parts, acc, hoisted)
            self._combine(pool, "acc", "v", "  # NaN propagates, as in torch")
        self.out.lines[hoist_at:hoist_at] = [f"    {name} = {text}  # the same at every window position"
                                             for text, name in hoisted.items()]

    def _window_value(self, pool: Pool, windows, view_parts, acc: str, hoisted: dict[str, str],
                      full_tile: bool = False) -> None:
        """v: the input at the window position p0.. (under mask m<last>), or the prologue computed there; outside
        the input -inf (max) or 0 (sum). `full_tile`: the offset broadcast to the tile (the sliding schedule's row
        position is one per program)."""
        view, _, in_strides, _ = view_parts
        nd = len(windows)
        other = 'float("-inf")' if pool.kind == "max" else "0.0"
        if self.prologue:
            value = self._window_prologue(nd, f"m{nd - 1}", hoisted)
            if any(p for _, _, p, _ in windows) or pool.ceil_mode:
                self.out(f"v = tl.where(m{nd - 1}, {value}.to({acc}), {other})  # padding: outside the prologue")
            else:
                self.out(f"v = {value}.to({acc})")
        else:
            offs = ["base"]
            for d in range(nd):
                st = self.sizes.text(in_strides[2 + d])
                offs.append(f"p{d}" if st == "1" else f"p{d} * {st}")
            offset = " + ".join(offs)
            ptr = self.pointer(view.base)
            self.out(f"v = tl.load({ptr} + ({self.full_tile(offset) if full_tile else offset}), mask=m{nd - 1}, "
                     f"other={other}).to({acc})")

    nan_max = False   # max as tl.maximum propagating NaN (NVIDIA: one max.NaN; gfx942 lowers it to more than
    #                   the compare and select: KernelBench 41's span kernel, 345 against 322 instructions)

    def _combine(self, pool: Pool, acc: str, v: str, note: str = "") -> None:
        """acc = max(acc, v) (NaN propagating, as torch's max) or acc + v. On NVIDIA (`nan_max`) one
        tl.maximum propagating NaN (max.NaN.f32: KernelBench 41's span kernel 290 PTX instructions against 446),
        elsewhere a compare and select."""
        if pool.kind == "max":
            if self.nan_max:
                self.out(f"{acc} = tl.maximum({acc}, {v}, propagate_nan=tl.PropagateNan.ALL){note}")
            else:
                self.out(f"{acc} = tl.where(({v} > {acc}) | ({v} != {v}), {v}, {acc}){note}")
        else:
            self.out(f"{acc} = {acc} + {v}")

    # --- the span schedule (SPAN=1) -----------------------------------------------------------------------------

    def _reduce_span(self, pool: Pool, windows, in_sizes: list[str], view_parts, acc: str, n_rows, cols: int) -> None:
        """acc, as `_reduce_window`, with the last axis's window read from aligned chunks of C input elements (one
        vector load each): lane group g owns the V = C / stride outputs g·V.. of a row, whose taps lie in chunks
        g + a for the few a of `span_chunks`, each loaded once (masked per element against the input's ends:
        -inf or 0 outside) and split into its C values; each output folds in its taps' values (acc<e>), and the V
        accumulators are joined back into the YBLOCK x XBLOCK tile. The outer window axes loop around it."""
        view, _, in_strides, _ = view_parts
        nd = len(windows)
        last = nd - 1
        k, s, p, dil = windows[last]
        taps = span_taps(itemsize(self.graph.buffer_type(view.base).dtype), k, s, p, dil)
        if taps is None or cols < len(taps):
            raise CodegenUnsupported(f"{pool.name}: SPAN=1 needs a stride dividing a chunk and at least "
                                     f"{len(taps) if taps else '?'} columns")
        chunk, v = len(taps) * s, len(taps)
        pid = "tl.program_id(1).to(tl.int64)" if self.big else "tl.program_id(1)"
        self.out(f"ymask = yindex < {self.sizes.text(n_rows)}  # rows inside the output")
        self.out(f"sg = {pid} * (XBLOCK // {v}) + tl.arange(0, XBLOCK // {v})[None, :, None]  # lane groups: "
                 f"{v} outputs, one chunk of {chunk} input elements")
        self.out(f"se = tl.arange(0, {chunk})[None, None, :]  # a chunk's elements")
        for d in range(last):
            _, sd, pd, _ = windows[d]
            start = f"i{2 + d} * {sd}" if sd != 1 else f"i{2 + d}"
            self.out(f"start{d} = {f'{start} - {pd}' if pd else start}")
        init = 'float("-inf")' if pool.kind == "max" else "0.0"
        for e in range(v):
            self.out(f"acc{e} = tl.full([YBLOCK, XBLOCK // {v}], {init}, {acc})")
        other = 'float("-inf")' if pool.kind == "max" else "0.0"
        loop = "tl.static_range" if prod(w[0] for w in windows[:last]) <= UNROLL_LIMIT else "range"
        st = self.sizes.text(in_strides[2 + last])
        with ExitStack() as loops:
            for d in range(last):
                self._window_step(pool, windows, in_sizes, d, loops, loop, first="ymask")
            rows = " + ".join(["base"] + [f"p{d}" if self.sizes.text(in_strides[2 + d]) == "1"
                                          else f"p{d} * {self.sizes.text(in_strides[2 + d])}" for d in range(last)])
            self.out(f"srow = ({rows})[:, :, None]  # the window row's start in the input")
            mask = f"m{last - 1}[:, :, None]" if last else "ymask[:, :, None]"
            values: dict[tuple[int, int], str] = {}
            for a in span_chunks(taps):
                group = f"(sg + {a})" if a > 0 else f"(sg - {-a})" if a < 0 else "sg"
                self.out(f"sq = {group} * {chunk} + se  # chunk {a}'s input positions")
                inside = (["(sq >= 0)"] if a < 0 else []) + [f"(sq < {in_sizes[last]})"]
                sq = "sq" if st == "1" else f"sq * {st}"
                self.out(f"sx = tl.load({self.pointer(view.base)} + (srow + {sq}), mask={' & '.join([mask] + inside)}, "
                         f"other={other}).to({acc})")
                for j, name in enumerate(self._span_split("sx", chunk, v, f"c{a}" if a >= 0 else f"cm{-a}")):
                    values[(a, j)] = name
            for e, output in enumerate(taps):
                for a, j in output:
                    self._combine(pool, f"acc{e}", values[(a, j)])
        self.out(f"acc = tl.reshape({self._span_join([f'acc{e}' for e in range(v)], v)}, [YBLOCK, XBLOCK])  # "
                 f"lane group g's {v} outputs at columns g·{v}..")
        _, s, p, _ = windows[last]
        start = f"i{2 + last} * {s}" if s != 1 else f"i{2 + last}"
        self.out(f"start{last} = {f'{start} - {p}' if p else start}")

    def _span_split(self, t: str, n: int, v: int, name: str) -> list[str]:
        """The n values along the last axis of tensor t ([YBLOCK, XBLOCK // v, n]) as [YBLOCK, XBLOCK // v] tensors,
        in order, by halving splits (even and odd elements)."""
        if n == 1:
            self.out(f"{name} = tl.reshape({t}, [YBLOCK, XBLOCK // {v}])")
            return [name]
        shaped = t if n == 2 else f"tl.reshape({t}, [YBLOCK, XBLOCK // {v}, {n // 2}, 2])"
        self.out(f"{name}e, {name}o = tl.split({shaped})")
        even = self._span_split(f"{name}e", n // 2, v, f"{name}e") if n > 2 else [f"{name}e"]
        odd = self._span_split(f"{name}o", n // 2, v, f"{name}o") if n > 2 else [f"{name}o"]
        return [x for pair in zip(even, odd) for x in pair]

    def _span_join(self, parts: list[str], v: int) -> str:
        """The [YBLOCK, XBLOCK // v, len(parts)] tensor of `parts` in order (the inverse of `_span_split`)."""
        if len(parts) == 1:
            return f"{parts[0]}[:, :, None]"
        if len(parts) == 2:
            return f"tl.join({parts[0]}, {parts[1]})"
        even, odd = self._span_join(parts[0::2], v), self._span_join(parts[1::2], v)
        return f"tl.reshape(tl.join({even}, {odd}), [YBLOCK, XBLOCK // {v}, {len(parts)}])"

    # --- the sliding schedule (ROWS > 1) ---------------------------------------------------------------------

    def _write_sliding(self, pool: Pool, space, windows, view_parts, acc: str) -> GeneratedKernel:
        """ROWS output rows along the second-to-last axis per program (module docstring): the input rows they read
        are loaded once each, reduced along the last axis, and folded into every output row that reads them."""
        nd, rank, n = len(windows), len(space), self.schedule.ROWS
        if nd < 2:
            raise CodegenUnsupported(f"{pool.name}: ROWS={n} slides along the second-to-last spatial axis, which a "
                                     "1-d pool has not")
        kh, sh, _, dh = windows[-2]
        read = sliding_rows(n, kh, sh, dh)
        if len(read) * windows[-1][0] > SLIDE_LOAD_LIMIT:
            raise CodegenUnsupported(f"{pool.name}: ROWS={n} unrolls {len(read) * windows[-1][0]} loads per step of "
                                     f"the window (at most {SLIDE_LOAD_LIMIT})")
        n_outer = product(space[:-2])
        if n_outer is None:
            raise CodegenUnsupported("output rows are not a product of sizes")
        rows, cols = tile_shape(pool, self.schedule.XBLOCK)
        self.sliding = True
        self._slide_tile(rank, space, n_outer)
        if not self.prologue:  # else the window's values are computed, not loaded
            self._input_base(*view_parts)
        in_sizes = [self.sizes.text(view_parts[1][2 + d]) for d in range(nd)]
        self._slide_window(pool, windows, in_sizes, view_parts, acc, read)
        self.full_mask = "omask"
        for r in range(n):
            self._slide_output(pool, windows, in_sizes, space, acc, r)
        shape_text = " x ".join(self.sizes.host(e) for e in space)
        doc = (f"{pool.describe()} -> ({shape_text}): {', '.join(self.group.nodes)}. A YBLOCK x XBLOCK tile of "
               f"(rows x last axis) in each of {n} consecutive output rows along axis {rank - 2} per program; each "
               "input row they read is loaded once, reduced along the last axis, and folded into the rows that "
               "read it.")
        grid = (GridAxis(((n_outer, rows), (space[-2], n))), one_dim(space[-1], cols))
        return self.finish(doc, [("YBLOCK", rows), ("XBLOCK", cols)], grid)

    def _slide_tile(self, rank: int, space, n_outer) -> None:
        """yindex: the tile's rows (n, c, o_1.. before the sliding axis), unravelled; row0: the program's first
        output row along the sliding axis (one per program); i<last>: its columns."""
        n = self.schedule.ROWS
        pid = "tl.program_id({}).to(tl.int64)" if self.big else "tl.program_id({})"
        self.out(f"groups = ({self.sizes.text(space[-2])} + {n - 1}) // {n}  # programs along axis {rank - 2}, "
                 f"{n} output rows each")
        self.out(f"yindex = ({pid.format(0)} // groups) * YBLOCK + tl.arange(0, YBLOCK)[:, None]  # rows: n, c, ..")
        self.out(f"row0 = ({pid.format(0)} % groups) * {n}  # the program's first output row along axis {rank - 2}")
        self.out(f"i{rank - 1} = {pid.format(1)} * XBLOCK + tl.arange(0, XBLOCK)[None, :]  # the last output axis")
        self.out(f"xmask = (yindex < {self.sizes.text(n_outer)}) & (i{rank - 1} < {self.sizes.text(space[-1])})")
        self.coords = {k: f"i{k}" for k in range(rank)}
        self.flat_index = "xindex"
        self.tile = "[YBLOCK, XBLOCK]"
        self.unravel(list(range(rank - 2)), space[:-2], "yindex")
        if rank == 4:  # two spatial axes: the row is n·C + c itself
            self.out("q2 = yindex")

    def _slide_window(self, pool: Pool, windows, in_sizes: list[str], view_parts, acc: str, read) -> None:
        """acc<r> for each output row r: its window's max or sum. The outer window axes (a 3-d pool's depth) loop as
        in `_reduce_window`; inside, each input row of `read` is loaded once along the last axis's window into h,
        which then folds into the output rows that read it. Its position p<row> is one per program; it is masked
        against the input's end always (the last program's rows past the output read past it)."""
        nd, n = len(windows), self.schedule.ROWS
        row, col = nd - 2, nd - 1
        for d in (*range(row), col):
            _, s, p, _ = windows[d]
            start = f"i{2 + d} * {s}" if s != 1 else f"i{2 + d}"
            self.out(f"start{d} = {f'{start} - {p}' if p else start}")
        _, s, p, _ = windows[row]
        top = f"row0 * {s}" if s != 1 else "row0"
        self.out(f"top = {f'{top} - {p}' if p else top}  # the first input row the program reads along axis {2 + row}")
        outer = row > 0
        init = 'float("-inf")' if pool.kind == "max" else "0.0"
        if outer:  # the accumulators cross the outer loop
            for r in range(n):
                self.out(f"acc{r} = tl.full([YBLOCK, XBLOCK], {init}, {acc})")
        hoist_at = len(self.out.lines)
        hoisted: dict[str, str] = {}
        loop = "tl.static_range" if prod(w[0] for w in windows[:row]) * len(read) * windows[col][0] <= \
            SLIDE_LOAD_LIMIT else "range"
        with ExitStack() as loops:
            for d in range(row):
                self._window_step(pool, windows, in_sizes, d, loops, loop)
            started: set[int] = set()
            for j, users in read:
                self.out(f"p{row} = top + {j}" if j else f"p{row} = top")
                low = [f"(p{row} >= 0)"] if p else []
                inside = " & ".join(low + [f"(p{row} < {in_sizes[row]})"])
                self.out(f"m{row} = {f'm{row - 1}' if row else 'xmask'} & ({inside})  # input row {j}: output rows "
                         f"{', '.join(map(str, users))}")
                self._slide_columns(pool, windows, in_sizes, view_parts, acc, hoisted)
                for r in users:
                    if outer or r in started:
                        self._combine(pool, f"acc{r}", "h")
                    else:
                        self.out(f"acc{r} = h")
                    started.add(r)
        self.out.lines[hoist_at:hoist_at] = [f"    {name} = {text}  # the same at every window position"
                                             for text, name in hoisted.items()]

    def _window_step(self, pool: Pool, windows, in_sizes: list[str], d: int, loops: ExitStack, loop: str,
                     first: str = "xmask") -> None:
        """Window axis d: its loop, position p<d> and mask m<d> (inside the loops of the axes before it; the first
        axis's starts from `first`)."""
        k, _, p, dil = windows[d]
        loops.enter_context(self.out.block(f"for k{d} in {loop}({k}):"))
        step = f"k{d} * {dil}" if dil != 1 else f"k{d}"
        self.out(f"p{d} = start{d} + {step}")
        # a window leaves the input only through padding, or at the end in ceil mode
        inside = ([f"(p{d} >= 0)"] if p else []) + ([f"(p{d} < {in_sizes[d]})"] if p or pool.ceil_mode else [])
        self.out(f"m{d} = {' & '.join([f'm{d - 1}' if d else first] + inside)}")

    def _slide_columns(self, pool: Pool, windows, in_sizes: list[str], view_parts, acc: str,
                       hoisted: dict[str, str]) -> None:
        """h: one input row's reduction over the last axis's window (its first element, then the rest unrolled)."""
        nd = len(windows)
        col = nd - 1
        k, _, p, dil = windows[col]
        inside = ([f"(p{col} >= 0)"] if p else []) + ([f"(p{col} < {in_sizes[col]})"] if p or pool.ceil_mode else [])
        # the column's bounds grouped: the same in every input row, computed once (common subexpressions)
        mask = f"m{col - 1} & ({' & '.join(inside)})" if len(inside) > 1 else " & ".join([f"m{col - 1}"] + inside)
        self.out(f"p{col} = start{col}")
        self.out(f"m{col} = {mask}")
        self._window_value(pool, windows, view_parts, acc, hoisted, full_tile=True)
        self.out("h = v")
        if k > 1:
            with self.out.block(f"for k{col} in tl.static_range(1, {k}):"):
                self.out(f"p{col} = start{col} + {f'k{col} * {dil}' if dil != 1 else f'k{col}'}")
                self.out(f"m{col} = {mask}")
                self._window_value(pool, windows, view_parts, acc, hoisted, full_tile=True)
                self._combine(pool, "h", "v")

    def _slide_output(self, pool: Pool, windows, in_sizes: list[str], space, acc: str, r: int) -> None:
        """Output row r of the program: its coordinates, value (acc<r>, or divided), epilogue and store."""
        rank = len(space)
        row = rank - 2
        oh, last = self.sizes.text(space[-2]), self.sizes.text(space[-1])
        self.out(f"i{row} = row0 + {r}" if r else f"i{row} = row0")
        self.out(f"omask = xmask & (i{row} < {oh})")
        self.out(f"xindex = (yindex * {oh} + i{row}) * {last} + i{rank - 1}  # the flat output position")
        value = f"acc{r}"
        if pool.kind == "avg":
            _, s, p, _ = windows[-2]
            start = f"i{row} * {s}" if s != 1 else f"i{row}"
            self.out(f"start{row - 2} = {f'{start} - {p}' if p else start}")
            value = f"acc{r} / {self._divisor(pool, windows, in_sizes, acc)}"
        self.out(f"v_{pool.name} = {value}  # {pool.describe()}, output row {r} of the program")
        self.loads = {}   # the epilogue's loads: this row's own
        self.compute_epilogue()
        self.store_outputs(space)

    def _check_prologue(self, pool: Pool, in_shape: list) -> None:
        """The pool reads a prologue member; every member lies over the pool's input element for element: at its
        shape without its size-1 axes (constant 1 in every variant, on both sides) or the same, or regrouped
        (plan/fusion.py's `regrouped`: a GroupNorm's (N, G, C/G.H.W)), in every variant (`_regrouped_axes`)."""
        view = pool.operands[0]
        if view.base not in self.members:
            raise CodegenUnsupported(f"{self.group.name}: {pool.name} reads no member of its prologue")
        shape = self.graph.node(view.base).out.shape
        for n in self.prologue:
            if n.out.shape != shape:
                self._regrouped_axes(n, in_shape)   # raises where it does not lie over the input so
        if tuple(s for s in shape if s != 1) != tuple(s for s in view.shape if s != 1):
            raise CodegenUnsupported(f"{self.group.name}: {pool.name} reads {view.base} as {view.shape}")
        ones = [e for e, s in zip(in_shape, view.shape) if s == 1]
        ones += [self.gen.expr(("node", view.base, "out", k), s) for k, s in enumerate(shape) if s == 1]
        if not all(e.is_constant for e in ones):
            raise CodegenUnsupported(f"{self.group.name}: a size-1 axis between {view.base} and {pool.name} "
                                     "changes with the input sizes")

    def _regrouped_axes(self, node, in_shape: list) -> tuple[str, list[SizeExpr]]:
        """How prologue member `node`, at a shape other than the pool input's, lies over it (`regrouped`'s
        "spatial" or "merged"), and the sizes of its axes over the input's rows (N·C, row-major): its leading axes,
        and for "merged" the number of rows its last axis spans (C/G for a GroupNorm). CodegenUnsupported unless the
        sizes say so in every variant, not only at the traced ones."""
        kind = regrouped(tuple(self.anchor.operands[0].shape), node.out.shape)
        sizes = [self.gen.expr(("node", node.name, "out", k), s) for k, s in enumerate(node.out.shape)]
        spatial, rows = in_shape[2:], product(in_shape[:2])
        outer: list[SizeExpr] | None = None
        if kind == "spatial" and all(same(a, b) for a, b in zip(sizes[-len(spatial):], spatial)):
            outer = sizes[:-len(spatial)]
        elif kind == "merged":
            planes = quotient(sizes[-1], product(spatial) or const(0))
            outer = sizes[:-1] + [planes] if planes is not None and is_whole(planes) else None
        if outer is None or rows is None or not same(product(outer) or const(0), rows):
            raise CodegenUnsupported(f"{self.group.name}: prologue {node.name} of shape {node.out.shape} does not "
                                     f"lie over the pool input {tuple(self.anchor.operands[0].shape)} in every "
                                     "variant")
        return kind, outer

    def _window_prologue(self, nd: int, mask: str, hoisted: dict[str, str]) -> str:
        """The prologue at the window position (i0, i1, p0, ..): `v_<member>` for each member, in the window loop's
        body; the name of the value the pool reads. Loads that vary over the window are masked by `mask` (the
        window's part inside the input); the others (a per-channel bias, a scalar) go to `hoisted`, loaded
        once above the loop."""
        at = {0: "i0", 1: "i1", **{2 + d: f"p{d}" for d in range(nd)}}  # the pool input's axes
        view = self.anchor.operands[0]
        shape = self.graph.node(view.base).out.shape
        # the prologue's own axes: the pool input's, size-1 axes aside (a 1-d pool reads (N, C, L) as (N, C, 1, L))
        window = {k: "0" for k, s in enumerate(shape) if s == 1}
        window |= dict(zip((k for k, s in enumerate(shape) if s != 1),
                           (at[k] for k, s in enumerate(view.shape) if s != 1)))
        outer, self.loads = self.loads, {}   # the loop body is a section of its own
        for node in self.prologue:
            place = window if node.out.shape == shape else self._regrouped_window(node, nd, hoisted)
            renderer = ExprRenderer(self._window_leaf(node, place, mask, hoisted), lambda a, w=place: w[a],
                                    self.slot(node), short_outputs=self.short_outputs)
            text = renderer.render(node.expr)
            self.helpers.update(renderer.helpers)
            self.out(f"v_{node.name} = {text}  # {node.origin}, {node.out} (prologue)")
        self.loads = outer
        return f"v_{self.anchor.operands[0].base}"

    def _regrouped_window(self, node, nd: int, hoisted: dict[str, str]) -> dict[int, str]:
        """Member `node`'s coordinates of the element at the window position (i0, i1, p0, ..), where it lies over the
        pool input regrouped (`_regrouped_axes`): its axes over the input's rows unravel the row n·C + c, once per
        output element (hoisted above the window loop); its spatial axes are the window's, or, "merged", its last
        axis is (rows into it) x H·W.. + the window's flat position in the plane. No division per window element."""
        in_shape = self.view_exprs(self.anchor, 0)[1]
        kind, outer = self._regrouped_axes(node, in_shape)

        def named(text: str) -> str:
            if text not in hoisted:
                hoisted[text] = f"rg{self.load_counter}"
                self.load_counter += 1
            return hoisted[text]

        row = named(f"i0 * {self.sizes.text(in_shape[1])} + i1")   # n·C + c
        coords, rest = [], row
        for k in range(len(outer) - 1, -1, -1):   # row-major over `outer`
            size = self.sizes.text(outer[k])
            coords.insert(0, named(f"{rest} % {size}") if k else rest)
            if k:
                rest = named(f"{rest} // {size}")
        spatial = [f"p{d}" for d in range(nd)]
        if kind == "spatial":
            return dict(enumerate(coords + spatial))
        plane, flat = in_shape[2:], spatial[-1]
        for d in range(nd - 2, -1, -1):
            flat = f"p{d} * {self.sizes.text(product(plane[d + 1:]))} + {flat}"
        start = named(f"{coords[-1]} * {self.sizes.text(product(plane))}")
        return dict(enumerate(coords[:-1] + [f"({start} + {flat})"]))

    def _window_leaf(self, node, window: dict[int, str], mask: str, hoisted: dict[str, str]):
        """Renders a prologue member's Load at the window position (AnchorWriter.leaf at other coordinates)."""
        moving = [f"p{d}" for d in range(len(self.anchor.kernel))]   # the window's positions

        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                if gather is not None:
                    raise CodegenUnsupported(f"{node.name} gathers from {view.base} of its group")
                producer = self.graph.node(view.base)
                if producer.out.shape == view.shape or view.offset or view.numel != producer.out.numel \
                        or tuple(view.strides) != contiguous_strides(view.shape):
                    self._check_aligned(node, load.operand)   # else a reshape: the same element, regrouped
                return f"v_{view.base}"
            if len(view.shape) != len(window):
                raise CodegenUnsupported(f"{node.name} operand {load.operand} has rank {len(view.shape)}")
            offset = self.operand_offset(node, load.operand, window)
            if gather is not None:
                stride = self.sizes.text(self.sizes.slot(("node", node.name, "gather", i), load.gather[0]))
                offset = f"{offset} + ({gather}).to(tl.int64) * {stride}"
            elif valid is None and not any(mentions(offset, p) for p in moving):
                text = self.load_text(view.base, offset, self.full_mask)
                if text not in hoisted:
                    hoisted[text] = f"ld{self.load_counter}"
                    self.load_counter += 1
                return hoisted[text]
            m = mask if valid is None else f"{mask} & {valid}"
            return self.cached_load(self.load_text(view.base, offset, m))
        return render

    def tile_axes(self) -> list[list[str]]:
        """Rows vary with the unravelled coordinates and yindex, columns with the last axis; both with xindex. In
        the sliding schedule the second-to-last axis (i<rank - 2>, p<nd - 2>) is one per program, and base (n, c)
        varies along rows."""
        rank = len(self.anchor.out.shape)
        nd = rank - 2  # a prologue's window positions p<d> vary like the output axis they step along
        if getattr(self, "sliding", False):
            return [[f"i{k}" for k in range(rank - 2)] + [f"p{d}" for d in range(nd - 2)] + ["yindex", "xindex"]
                    + (["base"] if getattr(self, "base_varies", False) else []),
                    [f"i{rank - 1}", f"p{nd - 1}", "xindex"]]
        return [[f"i{k}" for k in range(rank - 1)] + [f"p{d}" for d in range(nd - 1)] + ["yindex", "xindex"],
                [f"i{rank - 1}", f"p{nd - 1}", "xindex"]]

    def _divisor(self, pool: Pool, windows, in_sizes: list[str], acc: str) -> str:
        if pool.divisor:
            return repr(float(pool.divisor))
        factors = []
        for d, (k, _, p, _) in enumerate(windows):
            if pool.count_include_pad:
                # the window clipped to the padded input (only ceil mode's last window reaches past it)
                if pool.ceil_mode:
                    self.out(f"n{d} = tl.minimum(start{d} + {k}, {in_sizes[d]} + {p}) - start{d}")
                    factors.append(f"n{d}")
                else:
                    factors.append(str(k))
            else:
                self.out(f"n{d} = tl.minimum(start{d} + {k}, {in_sizes[d]}) - tl.maximum(start{d}, 0)")
                factors.append(f"n{d}")
        if all(f.isdigit() for f in factors):
            return repr(float(prod(int(f) for f in factors)))
        return f"({' * '.join(factors)}).to({acc})"
