"""The fused writer: a pointwise or reduction group's kernel body, value by value.

Every node's value lives in a register variable `v_<node>`; values a node reads from outside the group are
masked `tl.load`s through the operand's View (Addressing), with sizes and strides as runtime arguments. A
pointwise member that the planner folded in for one consumer reading it through a narrowing view (a `cat` of
`-x[..., d/2:]`) is recomputed at that consumer's index, under the consumer's mask. The reductions' passes are
reductions.py's, a whole-tensor split is split.py's; the lines are laid out by layout.py and made a kernel by
finish.py.
"""

from __future__ import annotations

from fractions import Fraction
from math import prod

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.addressing import Addressing
from kerntailor.codegen.fused.finish import finish_kernel
from kerntailor.codegen.fused.layout import Layout
from kerntailor.codegen.fused.patterns import live, row_major, softplus_of, unit_dims_only
from kerntailor.codegen.fused.reductions import write_reduction
from kerntailor.codegen.fused.space import compose, iteration_space
from kerntailor.codegen.fused.split import write_split
from kerntailor.codegen.fused.splitrows import write_cooperative, write_normalise, write_partials, write_windowed
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis, Scratch
from kerntailor.codegen.memory_format import permuted_axes
from kerntailor.codegen.render import FLOAT, TL_DTYPES, ExprRenderer, compute_dtype
from kerntailor.codegen.sizes import const, product
from kerntailor.codegen.writer import KernelWriter
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Node, Reduction
from kerntailor.ir.types import contiguous_strides
from kerntailor.units import next_power_of_two


class FusedWriter(KernelWriter):
    def __init__(self, gen, group, schedule, host_names: dict, name: str, tiled: str = "", phase: str = ""):
        super().__init__(gen, group, schedule, host_names, name)
        self.phase = phase   # a split-row reduction's kernel (splitrows.py): "partials", "normalise", "windowed"
        # or "cooperative"
        space = iteration_space(gen, group)
        self.tiled = "" if space.reduce else tiled   # "" (flat), "persistent" or "chunked" [rows, last axis]
        self.aligned = False   # rows read through rlen (align_rows)
        self.reduce = space.reduce or bool(self.tiled)
        self.persistent = schedule.persistent if space.reduce else self.tiled == "persistent"
        self.space = space.as_tiles() if self.tiled else space
        self.level = space.level
        self.big = space.big
        self.layout = Layout(self.out, self.sizes, self.space)
        self.at = Addressing(self.space, self.layout, self.sizes, self.reduce)
        self.reciprocals: dict[str, str] = {}   # row values divided by as a multiply (splitrows.row_reciprocals)
        # extra keyword text of full-size loads and stores (the windowed split's eviction policies)
        self.load_hint = self.store_hint = ""
        # what a float tile load's masked lanes hold ("0" unless a writer asks for a reduction's identity: the
        # cooperative split's one tile, splitrows.py), and the loads made so ({name: that text})
        self.load_other, self.filled = "0", {}

    # --- loads ---------------------------------------------------------------------------------------------
    def deferred_load(self, row: str, full: str, axes: set[int]) -> str:
        """A load whose offset moves only with reduced axes `axes`: row-shaped in a pass that loops over
        those axes as scalars, tile-shaped otherwise (decided when the passes are laid out)."""
        key = "\0" + full
        if key not in self.loads:
            name = f"ld{self.load_counter}"
            self.load_counter += 1
            self.layout.defer(name, row, full, axes)
            self.loads[key] = name
        return self.loads[key]

    def open_loop(self, rnumel: SizeExpr) -> tuple[int, dict]:
        """A pass over the row in RBLOCK chunks (Layout lays it out); each distinct load once inside it."""
        n = self.layout.open_loop(rnumel)
        saved, self.loads = self.loads, {}
        self.layout.loop_coords(n)
        return n, saved

    def close_loop(self, n: int, saved: dict) -> None:
        self.layout.close_loop(n)
        self.loads = saved

    def rindex(self, start: str, rnumel: str) -> None:
        self.out(f"rindex = {start} + tl.arange(0, RBLOCK)[None, :]  # within the row, (1, RBLOCK)")
        self.out(f"rmask = rindex < {rnumel}")
        self.layout.coords_block(list(self.space.axes), "rindex")

    # --- values --------------------------------------------------------------------------------------------
    def renderer(self, node: Node, level: str) -> ExprRenderer:
        return ExprRenderer(self.leaf(node, level), self.at.index_of(node), self.slot(node), self.reciprocals,
                            short_outputs=self.short_outputs, bind=self.bind)

    def leaf(self, node: Node, level: str):
        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                producer = self.graph.node(view.base)
                if self.level[producer.name] == "inline":
                    if gather is not None:
                        raise CodegenUnsupported(f"{node.name} gathers from a recomputed {producer.name}", node.name)
                    return f"({self.inline_value(producer, node, load.operand, valid, level)})"
                if gather is not None and self.level[producer.name] == "full" and level == "reduced":
                    return f"({self.gathered(producer, load.gather[0], gather)})"
                if gather is None and self.level[producer.name] == "full" and level == "reduced" \
                        and self.one_element_rows() and not view.offset and unit_dims_only(view, producer):
                    # a row of one element: the full value there is a row value, recomputed at the row's element
                    stride = contiguous_strides(tuple(self.space.concrete))[self.space.axes[0]]
                    return f"({self.gathered(producer, stride, '0')})"
                self.check_aligned(node, load.operand)
                return f"v_{view.base}"
            dtype = self.graph.buffer_type(view.base).dtype
            offset, bare, used, moves = self.at.offset(node, load.operand, level)
            if gather is not None:
                stride = self.sizes.text(self.sizes.slot(("node", node.name, "gather", i), load.gather[0]))
                offset = f"{offset} + ({gather}).to(tl.int64) * {stride}"
            mask = self.at.mask(level)
            if valid is not None:
                mask = f"{mask} & {valid}"
            cdt = compute_dtype(dtype)
            cast = f".to({TL_DTYPES[cdt]})" if cdt != dtype else ""
            other = self.load_other if dtype in FLOAT else "0"
            text = f"tl.load({self.pointer(view.base)} + ({offset}), mask={mask}, other={other}{self.load_hint}){cast}"
            if self.reduce and level == "full" and gather is None and valid is None and not moves:
                # the same element along the whole row chunk (a per-channel weight): one load per row, an
                # (XBLOCK, 1) value that broadcasts, not a tile-shaped load in a layout of its own
                if not used - set(self.space.axes):   # the same element for every row (a one-element scale;
                    # a GroupNorm's per-channel weight where a pass loops over the channels as scalars): a
                    # row-shaped pointer block, as the mask is (a scalar pointer under a block mask does not
                    # compile: KernelBench 50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling's scale after the
                    # library's convolution, 23_Conv3d_GroupNorm_Mean's affine in the mean's loads)
                    bare = f"{bare} + tl.zeros([XBLOCK, 1], tl.int32)"
                row = f"tl.load({self.pointer(view.base)} + ({bare}), mask=xmask, other=0){cast}"
                reduced = used & set(self.space.axes)
                if not reduced:
                    return self.cached_load(row)
                name = self.deferred_load(row, text, reduced)   # row-shaped where those axes are scalars
                if len(self.space.axes) > 1:   # a pass may loop over some as scalars: the row form has no rmask
                    return name
            else:
                name = self.cached_load(text)
            if other != "0" and valid is None and mask == self.at.mask("full"):
                self.filled[name] = other
            return name
        return render

    def one_element_rows(self) -> bool:
        """Whether the group reduces one element a row at every size (size-1 reduced axes: `x.mean(-1)` of an
        (N, C, 1) tensor), so that a full-size member is one value a row, which a per-row member may read."""
        size = self.at.reduced_size()
        return len(self.space.axes) == 1 and size.is_constant and size.coeff + size.offset == 1

    def inline_value(self, producer: Node, reader: Node, j: int, valid: str | None, level: str) -> str:
        frame = self.space.frame(reader)
        return self._render_inline(producer, frame, self.space.shift(reader, j, producer), valid, level,
                                   padded=any(a > b for a, b in zip(reader.operands[j].shape, producer.out.shape))
                                   or reader.operands[j].offset != 0)

    def _render_inline(self, node: Node, frame, shift: dict, valid: str | None, level: str, padded: bool) -> str:
        if padded and valid is None:
            raise CodegenUnsupported(f"{node.name} is read past its extent without a mask")

        def index(axis: int) -> str:
            text = self.at.frame_coord(frame, axis)
            for s in shift.get(axis, []):
                text = f"({text} + {self.sizes.text(s)})"
            return text

        def leaf(load: Load, gather: str | None, lvalid: str | None, i: int) -> str:
            view = node.operands[load.operand]
            masks = [m for m in (valid, lvalid) if m]
            if gather is not None:
                raise CodegenUnsupported(f"an indirect load in {node.name}, recomputed at another index")
            if view.base in self.members:
                inner = self.graph.node(view.base)
                inner_shift = compose(shift, self.space.shift(node, load.operand, inner))
                return "(" + self._render_inline(inner, frame, inner_shift, " & ".join(masks) or None, level,
                                                 padded) + ")"
            _, _, strides, offset = self.space.view_exprs(node, load.operand)
            conc, sym = self.space.final(frame, list(view.strides), list(strides))
            terms = [offset]
            for axis, steps in shift.items():
                for s in steps:   # a monomial and a constant (a roll's slice is read n - s along)
                    for part in (SizeExpr(s.coeff, s.factors), SizeExpr(Fraction(s.offset))):
                        term = product([strides[axis], part])
                        if term is None:
                            raise CodegenUnsupported(f"a shifted offset of {node.name} is no product of dims")
                        if not (term.is_constant and term.coeff == 0):
                            terms.append(term)
            text_offset = self.at.offset(node, load.operand, level, view=(conc, sym, terms)).text
            mask = " & ".join([self.at.mask(level)] + masks)
            dtype = self.graph.buffer_type(view.base).dtype
            text = f"tl.load({self.pointer(view.base)} + ({text_offset}), mask={mask}, other=0)"
            if compute_dtype(dtype) != dtype:
                text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
            return self.cached_load(text)

        return self._render(node, ExprRenderer(leaf, index, self.slot(node), short_outputs=self.short_outputs,
                                               bind=self.bind))

    def gathered(self, node: Node, stride: int, index: str) -> str:
        """The value of full-row member `node` at one position per row, chosen by `index` (its buffer's
        element stride `stride` picks the axis): cross-entropy's logp[target], recomputed, not stored."""
        space = self.space
        if isinstance(node, Reduction) or len(space.axes) != 1 or not space.ranges_identity \
                or (len(space.shape) != len(space.orig) and not self.one_element_rows()):
            raise CodegenUnsupported(f"gather from {node.name}")
        axis = space.axes[0]
        if contiguous_strides(tuple(space.concrete))[axis] != stride:
            raise CodegenUnsupported(f"gather from {node.name} along a kept axis")

        def leaf(load: Load, gather: str | None, valid: str | None, i: int) -> str:
            view = node.operands[load.operand]
            if view.base in self.members:
                producer = self.graph.node(view.base)
                if self.level[producer.name] == "reduced":
                    return f"v_{producer.name}"
                if self.level[producer.name] == "inline":
                    raise CodegenUnsupported(f"gather through a recomputed {producer.name}", node.name)
                self.check_aligned(node, load.operand)
                return f"({self.gathered(producer, stride, index)})"
            if gather is not None or valid is not None:
                raise CodegenUnsupported(f"nested indirect load in {node.name}")
            dtype = self.graph.buffer_type(view.base).dtype
            offset = self.at.offset(node, load.operand, "full", gathered={axis: index}).text
            text = f"tl.load({self.pointer(view.base)} + ({offset}), mask=xmask, other=0)"
            if compute_dtype(dtype) != dtype:
                text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
            return self.cached_load(text)

        index_of = self.at.index_of(node)
        return self._render(node, ExprRenderer(leaf, lambda a: f"({index})" if a == axis else index_of(a),
                                               self.slot(node), short_outputs=self.short_outputs, bind=self.bind))

    def _render(self, node: Node, renderer: ExprRenderer) -> str:
        text = renderer.render(node.expr)
        self.helpers.update(renderer.helpers)
        return text

    def check_aligned(self, node: Node, j: int) -> None:
        """`node` reads member operand j element for element (or a row value broadcast along its row)."""
        view = node.operands[j]
        producer = self.graph.node(view.base)
        # a reduction reads its input at full level, row by row
        mine = "full" if isinstance(node, Reduction) else self.level[node.name]
        theirs = self.level[producer.name]
        if mine == theirs:
            if view.shape != producer.out.shape and prod(view.shape) != prod(producer.out.shape):
                raise CodegenUnsupported(f"{node.name} reads {producer.name} through a reshaping view", node.name)
            if not row_major(view) and not unit_dims_only(view, producer):
                raise CodegenUnsupported(f"{node.name} reads {producer.name} through a permuting view", node.name)
            if view.offset:
                raise CodegenUnsupported(f"{node.name} reads {producer.name} at an offset", node.name)
            return
        if theirs == "reduced" and mine == "full":
            # a row value: stride 0 along the reduced axes, and the rows in their own order
            frame = self.space.frame(node)
            if tuple(view.shape) != frame:
                raise CodegenUnsupported(f"{node.name} operand {j} has shape {view.shape}, its frame is {frame}",
                                         node.name)
            fc, _ = self.space.final(frame, list(view.strides), [const(0)] * len(frame))
            concrete, outer = self.space.concrete, self.space.outer
            if any(fc[k] != 0 for k in self.space.axes if concrete[k] != 1):
                raise CodegenUnsupported(f"{node.name} reads row value {producer.name} along the reduced axes",
                                         node.name)
            expected = contiguous_strides(tuple(concrete[k] for k in outer))
            if any(fc[k] != e for k, e in zip(outer, expected) if concrete[k] != 1):
                raise CodegenUnsupported(f"{node.name} reads row value {producer.name} out of row order", node.name)
            return
        raise CodegenUnsupported(f"{node.name} (per row) reads a full-row value {producer.name} of the group",
                                 node.name)

    def compute(self, node: Node, done: set[str]) -> None:
        """Emit v_<node> for a pointwise node and, first, any member it needs that is not done."""
        if node.name in done or self.level[node.name] == "inline":
            return
        softplus = softplus_of(self.space, node)
        for op in (node.operands if softplus is None else [softplus[0].operands[softplus[1]]]):
            if op.base in self.members and op.base not in done:
                producer = self.graph.node(op.base)
                if self.level[producer.name] == "inline":
                    continue  # recomputed where it is read
                if self.level[node.name] == "reduced" and self.level[producer.name] == "full":
                    continue  # read one element per row through a gather, recomputed there
                if isinstance(producer, Reduction):
                    raise CodegenUnsupported(f"{node.name} needs {producer.name} before it is reduced", node.name)
                self.compute(producer, done)
        level = self.level[node.name]
        if softplus is not None:  # tanh(softplus(x)) from one exp (Mish): see codegen/helpers/math.py
            producer, j = softplus
            x = self.leaf(producer, level)(Load(j, self.graph.buffer_type(producer.operands[j].base).dtype))
            self.helpers.add("tanh_softplus")
            text = f"_tanh_softplus({x})"
        else:
            text = self._render(node, self.renderer(node, level))
        # the shape in the comment is symbolic too: no size of one variant appears in the kernel text
        shape = ", ".join(self.sizes.host(self.sizes.slot(("node", node.name, "out", k), s))
                          for k, s in enumerate(node.out.shape))
        self.out(f"v_{node.name} = {text}  # {node.origin}, {node.out.dtype}[{shape}]")
        done.add(node.name)
        source = text.removesuffix(".to(tl.float32)")
        if source != text and source in self.filled and node.out.dtype == "fp32":   # a filled load upcast: bf16's x
            self.filled[f"v_{node.name}"] = self.filled[source]

    def compute_live(self) -> set[str]:
        """Every member some output needs, in the group's order; the values computed."""
        done: set[str] = set()
        needed = live(self.space, self.outputs())
        for node in self.nodes:
            if node.name in needed:
                self.compute(node, done)
        return done

    def outputs(self) -> list[Node]:
        return [self.graph.node(o) for o in self.group.outputs]

    def store_outputs(self, level: str, done: set[str] | None = None) -> None:
        done = set() if done is None else done
        for node in self.outputs():
            if self.level[node.name] != level:
                continue
            if not isinstance(node, Reduction):
                self.compute(node, done)
            value = f"v_{node.name}"
            out_dtype = node.out.dtype
            if out_dtype != compute_dtype(out_dtype) or out_dtype in ("i64", "i32", "bool"):
                value = f"{value}.to({TL_DTYPES[out_dtype]})"
            hint = self.store_hint if level == "full" else ""
            self.out(f"tl.store({self.pointer(node.name)} + ({self.at.store_offset(node)}), {value}, "
                     f"mask={self.at.mask(level)}{hint})")

    # --- the kernel ----------------------------------------------------------------------------------------
    def write(self) -> GeneratedKernel:
        reduction = self.space.reduce   # (a tiled pointwise group walks rows too)
        xblock = self.schedule.XBLOCK
        rblock = self.schedule.RBLOCK if reduction else 1
        if self.tiled == "persistent":   # XBLOCK counts elements per program: that many / RBLOCK rows
            rblock = next_power_of_two(self.space.concrete[-1])
            xblock = max(1, xblock // rblock)
        elif self.tiled == "tile2d":       # YBLOCK rows x a chunk of the last axis, XBLOCK elements in all
            ybl = self.schedule.YBLOCK
            rblock, xblock = min(max(1, xblock // ybl), next_power_of_two(self.space.concrete[-1])), ybl
        elif self.tiled:                   # one chunk of XBLOCK elements of one row per program
            rblock, xblock = xblock, 1
        self.layout.rblock = rblock
        shape = self.space.shape
        rows = product([shape[k] for k in self.space.outer]) if self.reduce else product(shape)
        if rows is None:
            raise CodegenUnsupported("iteration sizes are not products of input dims")
        xnumel = self.sizes.text(rows)
        self.rows = rows
        split = self.schedule.SPLIT if reduction else 0
        if split and self.phase:
            writers = {"partials": write_partials, "normalise": write_normalise, "windowed": write_windowed,
                       "cooperative": write_cooperative}
            return writers[self.phase](self, split, rblock)
        if split:
            return write_split(self, split, rblock, rows)
        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        if not self.reduce:   # flat: XBLOCK elements in row-major order
            self.out(f"xindex = {pid} * XBLOCK + tl.arange(0, XBLOCK)")
            self.out(f"xmask = xindex < {xnumel}")
            self.layout.coords_block(list(range(len(shape))), "xindex")
            self.store_outputs("full", self.compute_live())
            return self.finish(xblock, rblock, rows)
        if self.tiled == "chunked":   # program = (row, chunk): one division per program, none per element
            self.out(f"nchunks = tl.cdiv({self.sizes.text(self.at.reduced_size())}, RBLOCK)")
            self.out(f"xindex = ({pid} // nchunks + tl.arange(0, XBLOCK))[:, None]  # the row, (1, 1)")
        elif self.tiled == "tile2d":   # program = (row block, chunk)
            self.out(f"nchunks = tl.cdiv({self.sizes.text(self.at.reduced_size())}, RBLOCK)")
            self.out(f"xindex = (({pid} // nchunks) * XBLOCK + tl.arange(0, XBLOCK))[:, None]  # rows, (XBLOCK, 1)")
        else:
            self.out(f"xindex = ({pid} * XBLOCK + tl.arange(0, XBLOCK))[:, None]  # rows, (XBLOCK, 1)")
        self.out(f"xmask = xindex < {xnumel}")
        self.align_rows()   # first: a row coordinate may divide by a size equal to the row length (read as rlen)
        self.layout.coords_block(list(self.space.outer), "xindex")
        if not self.tiled:
            write_reduction(self, rblock)
        else:   # [rows, last axis] tiles: the row in one block (persistent), or one chunk of it
            start = f"({pid} % nchunks) * RBLOCK" if self.tiled in ("chunked", "tile2d") else "0"
            self.rindex(start, self.sizes.text(self.at.reduced_size()))
            self.store_outputs("full", self.compute_live())
        return self.finish(xblock, rblock, rows)

    def align_rows(self) -> None:
        """Rows along the innermost axes start at xindex * (row length), and the row mask compares with it: the
        kernel reads the length as `rlen = length // ALIGN * ALIGN` (the same value: the host sets ALIGN per call
        to the length's largest power-of-two divisor, at most 16), so the compiler knows both are multiples of
        ALIGN. Triton knows it only for sizes divisible by 16 (its integer specialization); without it a row of
        115,320 fp32 elements (a multiple of 8) is read and written 4 bytes per instruction instead of 16
        (cross-compiled for sm_90: tests/test_codegen_fused.py)."""
        if not self.at.trailing():
            return
        length = self.at.reduced_size()
        if length.is_constant:
            return
        self.out(f"rlen = {self.sizes.text(length)} // ALIGN * ALIGN  # the row length, seen as a multiple of ALIGN")
        self.sizes.alias(length, "rlen")
        self.aligned = True

    def tile_mode(self) -> str:
        """For a flat pointwise kernel that divides element indices (some load needs coordinates): walk
        [rows, last axis] tiles instead, which divide row indices once per row. "persistent": a row fits a
        power-of-two block with little waste; "chunked": long rows, one XBLOCK chunk of one row per program
        (row and chunk from the program id: one division per program), when the chunks waste at most a
        quarter of their lanes; "" keeps the flat kernel. (Chunked replaced a loop over each row's chunks in
        one program per row: 2.2x behind Inductor's flat kernel on the H200, 3575 us against 1645 us on a
        conv-transpose output of 2,048 rows of 424,175 elements, and 779 against 503 us on 2,048 rows of
        115,320: benchmarks/data/kernelbench_profile_h200_2026-12-01.json.)"""
        concrete = self.space.concrete
        if self.reduce or self.tiled or len(concrete) < 2 or not self.schedule.tiles:
            return ""
        if self.schedule.tile2d and self.permuted_read():
            return "tile2d"
        if not any(b["used"] for b in self.layout.blocks):
            return ""
        last = concrete[-1]
        block = next_power_of_two(last)
        if 8 <= last and block <= 8192 and last / block >= 0.75:
            return "persistent"
        chunk = self.schedule.XBLOCK
        if last >= chunk and last / (-(-last // chunk) * chunk) >= 0.75:
            return "chunked"
        return ""

    def permuted_read(self) -> bool:
        """Whether some load of the flat pointwise kernel is permuted against the output: contiguous along the
        next-to-last kernel axis (the rows' innermost), strided along the last (the store's contiguous axis), as
        an NHWC buffer read for an NCHW output (memory_format.py) or a transpose. Rows of a flat or [rows, last
        axis] walk then step the load by its stride between neighbouring lanes: "tile2d" (tile_mode) puts the
        load's contiguous axis along the tile's rows and the store's along its columns, and Triton converts
        the layout between them (Inductor's YBLOCK x XBLOCK tiles for the same reads)."""
        concrete = self.space.concrete
        if len(concrete) < 2 or concrete[-1] < 2 or concrete[-2] < 2:   # a flat (1-D) space: nothing to permute
            return False
        for node in self.nodes:
            if self.level[node.name] != "full" or isinstance(node, Reduction):
                continue
            for j, view in enumerate(node.operands):
                if view.base in self.members:
                    continue
                try:
                    v, _, strides, _ = self.at.kernel_view(node, j)
                except CodegenUnsupported:
                    continue
                if permuted_axes(v, strides, -2, -1):
                    return True
        return False

    def many_rows(self) -> bool:
        """Whether the group has more than one row at the traced shapes (a split then splits each row)."""
        return prod(self.space.concrete[k] for k in self.space.outer) > 1

    def finish(self, xblock: int, rblock: int, rows: SizeExpr, split: int = 0, scratch: tuple[Scratch, ...] = (),
               grid: GridAxis | None = None, reads: tuple[Scratch, ...] = (),
               host_prologue: tuple[str, ...] = (), host_constexprs: tuple[tuple[str, str], ...] = ()
               ) -> GeneratedKernel:
        """The kernel from the body written so far (finish.py's `finish_kernel`)."""
        return finish_kernel(self, xblock, rblock, rows, split, scratch, grid, reads, host_prologue, host_constexprs)
