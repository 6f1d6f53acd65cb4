"""The GEMM writer: one program per output tile (or, persistent, per SM walking the tiles), the product path
the Product chose filling `acc`, then split-K's combine, the epilogue and the stores or the row tail."""

from __future__ import annotations

from contextlib import contextmanager

from kerntailor.capture.generalize import SizeExpr
from kerntailor.codegen.anchor import AnchorWriter, mentions
from kerntailor.codegen.assemble import assemble
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.gemm import (
    MATRIX_DTYPES,
    PERSISTENT_PROGRAMS,
    PERSISTENT_PROGRAMS_TRACED,
    MatmulSchedule,
    choose_product,
)
from kerntailor.codegen.gemm.loops import (
    dot_loop,
    flush_steps,
    gemv_loop,
    long_k,
    times,
    tma_descriptors,
    tma_loop,
    tma_plan,
)
from kerntailor.codegen.gemm.operands import LIBRARY_PRODUCTS, fp8_operands, fp8_rescale, library_product
from kerntailor.codegen.gemm.tail import (
    ROW_SCRATCH_DTYPES,
    find_row_tail,
    row_tail_launch,
    row_value_load,
    split_combine,
    tile_form,
    write_row_tail,
)
from kerntailor.codegen.helpers import named_helper, num_programs, tma_allocator
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis, Scratch
from kerntailor.codegen.render import TL_DTYPES, compute_dtype
from kerntailor.codegen.sizes import const
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Matmul, Node
from kerntailor.plan.row_tail import RowTail


class GemmWriter(AnchorWriter):
    anchor_type = Matmul

    def __init__(self, gen, group, schedule: MatmulSchedule, host_names, name, arch):
        super().__init__(gen, group, schedule, host_names, name)
        self.arch = arch
        self.module_helpers: list[str] = []          # module-level text: the dot of the policy, fp8 quantize
        self.bases: dict[str, str] = {}
        self.product = None                          # the Product, chosen by write()
        self.tma: tuple[str, str, int] | None = None  # the USE_TMA constexpr: (name, host condition, traced value)
        self.long_k: tuple[str, str, int] | None = None  # the LONG_K constexpr (loops.k_loop), as USE_TMA
        self.prologue: list[str] = []                # host lines before the launch (fp8 quantize, library product)

    def tail_names(self) -> set[str]:
        """A group the planner gave row reductions (reduce_axes): its row tail (plan/row_tail.py). A dual group's
        second product (plan/dual.py) is no epilogue either: its tile is the loop's second accumulator."""
        self.row: RowTail | None = find_row_tail(self)
        self.second: Matmul | None = next((n for n in self.nodes if isinstance(n, Matmul) and n is not self.anchor),
                                          None)
        return (set(self.row.nodes) if self.row is not None else set()) | ({self.second.name} if self.second else set())

    def add_module_helper(self, text: str) -> None:
        if text not in self.module_helpers:
            self.module_helpers.append(text)

    # --- the kernel ----------------------------------------------------------------------------------------
    def write(self) -> GeneratedKernel:
        mm: Matmul = self.anchor
        nb = len(mm.batch)
        a_parts, b_parts = self.view_exprs(mm, 0), self.view_exprs(mm, 1)
        dtype = self.operand_dtype(mm)
        p = self.product = choose_product(self.schedule, self.gen, mm, dtype, self.arch, self.group.name)
        second = self._second_operand(a_parts, b_parts, dtype) if self.second is not None else None
        if p.fp8 is not None:  # the kernel reads quantized copies of A and B (and their scales)
            a_parts, b_parts = fp8_operands(self, nb, a_parts, b_parts, p.precision == "fp8-row")
            dtype = "fp8"
        space = [self.sizes.slot(("node", mm.name, "out", k), s) for k, s in enumerate(mm.out.shape)]
        a_shape, b_shape = a_parts[1], b_parts[1]
        M, N, K = self.sizes.text(a_shape[-2]), self.sizes.text(b_shape[-1]), self.sizes.text(a_shape[-1])
        if dtype == "fp32" and p.path not in ("gemv", "library"):   # a long K's fp32 sum in two levels (loops.py)
            self.long_k = long_k(self.sizes.host(a_shape[-1]), a_parts[0].shape[-1], p.split)
        plan = tma_plan(self, (a_parts[0], a_parts[2], a_parts[3]), (b_parts[0], b_parts[2], b_parts[3])) \
            if p.tma else None
        with self._programs(plan, M, N, K):
            self._program_ids(nb, space, M, N)
            self._product(nb, a_parts, b_parts, plan, (M, N, K), dtype, second)
            self.output_tile(nb, M, N)
            with split_combine(self, p.split):
                if p.fp8 is not None:
                    fp8_rescale(self, nb, M, N)
                self.out(f"v_{mm.name} = acc  # {self._describe(mm, a_shape, b_shape, nb)}, fp32 accumulator")
                if second is not None:
                    self.out(f"v_{self.second.name} = acc2  # {self._describe(self.second, a_shape, second[2], nb)}, "
                             "the second product's fp32 accumulator")
                self.compute_epilogue()
                if self.row is not None:
                    if p.gemv:
                        raise CodegenUnsupported(f"{self.group.name}: row reductions after a matrix-vector product")
                    write_row_tail(self, M, N, tile_form(self.row, space[nb + 1], p.blocks[1]))
                else:
                    self.store_outputs(space)
        described = self._describe(mm, a_shape, b_shape, nb)
        if second is not None:
            described += f" and {self._describe(self.second, a_shape, second[2], nb)} (A tiles loaded once for both)"
        return self._finish(mm, space, nb, described)

    def output_tile(self, nb: int, M: str, N: str) -> None:
        """The output tile's coordinates and masks, where the epilogue and the stores find them."""
        self.out("om = rm[:, None]  # output rows, (BLOCK_M, 1)")
        self.out("on = rn[None, :]  # output columns, (1, BLOCK_N)")
        self.out(f"mmask = om < {M}")
        self.out(f"nmask = on < {N}")
        self.coords = {j: f"i{j}" for j in range(nb)} | {nb: "om", nb + 1: "on"}
        self.tile = "[BLOCK_M, BLOCK_N]"
        self.full_mask = "mmask & nmask"

    def operand_dtype(self, mm: Matmul) -> str:
        """The dtype of `mm`'s A and B (CodegenUnsupported where their ranks or dtypes are not a GEMM's)."""
        a, b, nb = mm.operands[0], mm.operands[1], len(mm.batch)
        if len(a.shape) != nb + 2 or len(b.shape) != nb + 2 or len(mm.out.shape) != nb + 2:
            raise CodegenUnsupported(f"{mm.name}: operands of rank {len(a.shape)}, {len(b.shape)} for "
                                     f"{nb} batch dims")
        dtype = self.graph.buffer_type(a.base).dtype
        if dtype not in MATRIX_DTYPES or self.graph.buffer_type(b.base).dtype != dtype:
            raise CodegenUnsupported(f"{mm.name}: matmul of {dtype} x {self.graph.buffer_type(b.base).dtype}")
        return dtype

    @contextmanager
    def _programs(self, plan, M: str, N: str, K: str, num_n: str = ""):
        """A persistent kernel's loop over the tiles (its TMA descriptors built once, before it); else nothing:
        one program, one tile. `num_n`: as _program_ids'."""
        if not self.product.persistent:
            yield
            return
        if plan:  # the descriptors once per program, before its tiles
            with self.out.block("if USE_TMA:"):
                tma_descriptors(self, plan, M, N, K)
        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        self.out(f"num_m = tl.cdiv({M}, BLOCK_M)")
        self.out(f"num_n = {num_n or f'tl.cdiv({N}, BLOCK_N)'}")
        with self.out.block(f"for pid in range({pid}, num_m * num_n, NUM_PROGRAMS):  # persistent: tile after tile"):
            yield

    def _program_ids(self, nb: int, space: list[SizeExpr], M: str, N: str, num_n: str = "") -> None:
        """pid -> (batch coordinates, split, tile row pid_m, tile column pid_n); the K splits of one
        tile are neighbours, then the tiles of one batch element in GROUP_M-row groups. `num_n`: the column tiles
        where they are not N's (a horizontal group's, over all its products: the caller then places rn)."""
        split, group_m = self.product.split, self.product.group_m
        if not self.product.persistent:   # (a persistent program's pid is its loop's)
            self.out(f"pid = {'tl.program_id(0).to(tl.int64)' if self.big else 'tl.program_id(0)'}")
            self.out(f"num_m = tl.cdiv({M}, BLOCK_M)")
            self.out(f"num_n = {num_n or f'tl.cdiv({N}, BLOCK_N)'}")
        rest = "pid"
        if split > 1:
            self.out("split = pid % SPLIT_K")
            self.out("tile_id = pid // SPLIT_K  # the output tile (over all batch elements)")
            rest = "tile_id"
        if nb:
            self.out(f"tile = {rest} % (num_m * num_n)")
            self.out(f"bidx = {rest} // (num_m * num_n)")
            self.unravel(list(range(nb)), space[:nb], "bidx")  # batch coordinates i0, i1, ...
            rest = "tile"
        if group_m > 1:
            self.out("width = GROUP_M * num_n  # GROUP_M tile rows, swept column by column (L2 reuse)")
            self.out(f"first_m = ({rest} // width) * GROUP_M")
            self.out("rows = tl.minimum(num_m - first_m, GROUP_M)")
            self.out(f"pid_m = first_m + ({rest} % width) % rows")
            self.out(f"pid_n = ({rest} % width) // rows")
        else:
            self.out(f"pid_m = {rest} // num_n")
            self.out(f"pid_n = {rest} % num_n")
        self.out("rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)")
        if not num_n:
            self.out("rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)")
        self.out("rk = tl.arange(0, BLOCK_K)")

    def _second_operand(self, a_parts, b_parts, dtype: str):
        """(view, strides, shape) of a dual group's second B (plan/dual.py), read beside B in one K loop; the
        schedules that loop does not cover are refused (CodegenUnsupported: the search skips them)."""
        text = self.sizes.text
        self.refuse_paths("a dual product (two accumulators)", library=True)
        a2, b2 = self.view_exprs(self.second, 0), self.view_exprs(self.second, 1)
        same_a = a2[0] == a_parts[0] and all(text(x) == text(y) for x, y in zip(
            [*a2[1], *a2[2], a2[3]], [*a_parts[1], *a_parts[2], a_parts[3]]))
        if not same_a or text(b2[1][-1]) != text(b_parts[1][-1]) or text(b2[1][-2]) != text(b_parts[1][-2]) \
                or self.graph.buffer_type(b2[0].base).dtype != dtype:
            raise CodegenUnsupported(f"{self.group.name}: {self.second.name} does not share A, N and K with "
                                     f"{self.anchor.name} at every size")
        return b2[0], b2[2], b2[1], b2[3]

    def refuse_paths(self, what: str, persistent: bool = False, library: bool = False) -> None:
        """CodegenUnsupported where the Product takes a path the writer of `what` does not build (split-K, GEMV,
        the library product unless `library`, fp8, TMA; persistent programs too where `persistent`): the search
        skips it."""
        p = self.product
        refused = [why for why, on in (("split-K", p.split > 1), ("the GEMV path", p.path == "gemv"),
                                       ("the library product", p.path == "library" and not library),
                                       ("fp8", p.fp8 is not None),
                                       ("TMA", p.tma), ("persistent programs", persistent and p.persistent)) if on]
        if refused:
            raise CodegenUnsupported(f"{self.group.name}: {what} under {refused[0]} (not built)")

    def _product(self, nb: int, a_parts, b_parts, plan, mnk: tuple[str, str, str], dtype: str, second) -> None:
        """acc: this tile of the product, by the Product's path (and acc2 of a dual group's second product)."""
        p, (M, N, K) = self.product, mnk
        (a, _, a_strides, a_off), (b, _, b_strides, b_off) = a_parts, b_parts
        if p.path == "library":   # a dual group's second product too: two library GEMMs, one epilogue kernel
            library_product(self, nb, a_parts, b_parts, M, N)
            if second is not None:
                library_product(self, nb, a_parts, (second[0], second[2], second[1], second[3]), M, N, which=1)
            return
        self._operand_bases(nb, (a, a_strides, a_off), (b, b_strides, b_off))
        if second is not None:
            self._operand_bases(nb, (second[0], second[1], second[3]), names=("b2_base",))
        self._k_range(p.split, K)
        operands = (a, a_strides, b, b_strides)
        if p.path == "gemv":
            gemv_loop(self, p.gemv, operands, M, N, K)
        elif plan:
            with self.out.block("if USE_TMA:  # TMA descriptors: the copy engine fetches the tiles (sm_90)"):
                self.tma = tma_loop(self, plan, M, N, K, dtype, p.precision)
            with self.out.block("else:  # a stride or address TMA cannot take in this call: pointer tiles"):
                dot_loop(self, operands, M, N, K, dtype, p.precision)
        else:
            dot_loop(self, operands, M, N, K, dtype, p.precision, second[:2] if second else None)

    def _operand_bases(self, nb: int, *operands, names: tuple[str, ...] = ("a_base", "b_base")) -> None:
        """a_base, b_base (or `names`): where the program's batch element starts in A and B (and any view offset)."""
        for name, (v, strides, offset) in zip(names, operands):
            terms = [times(self, f"i{j}", strides[j]) for j in range(nb)
                     if not (v.strides[j] == 0 and strides[j].is_constant)
                     and not (v.shape[j] == 1 and strides[j].is_constant)]
            if not offset.is_constant or offset.coeff + offset.offset != 0:
                terms.append(self.sizes.text(offset))
            base = " + ".join(terms) or "0"
            self.bases[name] = f" + {name}" if base != "0" else ""
            if base != "0":
                self.out(f"{name} = {base}  # batch element and view offset")

    def _k_range(self, split: int, K: str) -> None:
        """The BLOCK_K steps this program covers: all of them, or its split's share."""
        self.out(f"k_tiles = tl.cdiv({K}, BLOCK_K)")
        if split > 1:
            self.out("k_per_split = tl.cdiv(k_tiles, SPLIT_K)")
            self.out("k_lo = split * k_per_split")
            self.out("k_hi = tl.minimum(k_lo + k_per_split, k_tiles)")
        else:
            self.out("k_lo = 0")
            self.out("k_hi = k_tiles")

    def _describe(self, mm: Matmul, a_shape: list[SizeExpr], b_shape: list[SizeExpr], nb: int) -> str:
        """The product with symbolic sizes (no size of the traced variant in the kernel text)."""
        host = self.sizes.host
        batch = " x ".join(host(e) for e in a_shape[:nb])
        layout = "".join("N" if op.strides[-1] == 1 else "T" for op in mm.operands[:2])
        return (f"{batch + ' x ' if batch else ''}({host(a_shape[-2])} x {host(a_shape[-1])}) @ "
                f"({host(b_shape[-2])} x {host(b_shape[-1])}) [{layout}]")

    # --- the epilogue's loads: only the tile axes an operand varies along ----------------------------------
    def tile_axes(self) -> list[list[str]]:
        return [["om", "rm"], ["on", "rn"]]

    def leaf(self, node: Node):
        full = super().leaf(node)

        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            row_value = row_value_load(self, view.base, gather, valid)
            if row_value is not None:
                return row_value
            if view.base in self.members or gather is not None or valid is not None:
                return full(load, gather, valid, i)
            if len(view.shape) != len(self.anchor.out.shape):
                raise CodegenUnsupported(f"{node.name} operand {load.operand} has rank {len(view.shape)}")
            offset = self.operand_offset(node, load.operand, self.coords)
            # read only the tile axes the operand varies along: a bias is one (1, BLOCK_N) row, not a
            # tile of repeated addresses; its mask is that axis's
            masks = [m for name, m in (("om", "mmask"), ("on", "nmask")) if mentions(offset, name)]
            mask = f", mask={' & '.join(masks)}, other=0" if masks else ""
            text = f"tl.load({self.pointer(view.base)} + ({offset}){mask})"
            dtype = self.graph.buffer_type(view.base).dtype
            if compute_dtype(dtype) != dtype:
                text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
            return self.cached_load(text)
        return render

    # --- the launch ----------------------------------------------------------------------------------------
    def _finish(self, mm: Matmul, space: list[SizeExpr], nb: int, product_text: str,
                grid: GridAxis | None = None) -> GeneratedKernel:
        """The kernel and its launch; `grid`: the programs where they are not one per tile of `space` (and split)."""
        p = self.product
        (bm, bn, bk), split = p.blocks, p.split
        constexprs = [("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_K", bk)]
        constexprs += [("GROUP_M", p.group_m)] if p.group_m > 1 else []
        constexprs += [("SPLIT_K", split)] if split > 1 else []
        constexprs += [(self.tma[0], self.tma[2])] if self.tma else []
        host_constexprs = ((self.tma[0], self.tma[1]),) if self.tma else ()
        if self.long_k:
            constexprs += [(self.long_k[0], self.long_k[2]), ("K_FLUSH", flush_steps(bk))]
            host_constexprs += ((self.long_k[0], self.long_k[1]),)
        if p.persistent:  # the build compiles for the traced GPU's count (an H200's 132 SMs)
            constexprs += [("NUM_PROGRAMS", PERSISTENT_PROGRAMS_TRACED)]
            host_constexprs += (("NUM_PROGRAMS", PERSISTENT_PROGRAMS),)
            self.helpers.add("num_programs")
        own = {"tma_allocator": tma_allocator, "num_programs": num_programs}
        helpers = tuple(own[h]() if h in own else named_helper(h) for h in sorted(self.helpers))
        batch = [space[j] for j in range(nb)]
        tiles = tuple((e, 1) for e in batch) + ((space[nb], bm), (space[nb + 1], bn))
        factors = tiles + (((const(split), 1),) if split > 1 else ())
        scratch = ()
        if split > 1:  # partial tiles (every element written before it is read: not zeroed) and counters
            scratch = (Scratch("partials", "fp32", factors + ((const(bm * bn), 1),), False),
                       Scratch("counters", "i32", tiles))
        if self.row is not None:
            form = tile_form(self.row, space[nb + 1], bn)
            row = row_tail_launch(self.row, form, tuple((e, 1) for e in batch), space[nb], space[nb + 1], (bm, bn),
                                  self.anchor.n, self.sizes.host(space[nb + 1]), self.name)
            constexprs += list(row.constexprs)
            scratch += row.scratch
        host_buffers = (("fp8_a", "fp8_sa", "fp8_b", "fp8_sb") if p.fp8 is not None else
                        tuple(b for b, _ in LIBRARY_PRODUCTS[:2 if self.second is not None else 1])
                        if p.path == "library" else ())
        return assemble(group=self.group.name, name=self.name, doc=self._doc(mm, space, product_text),
                        body=self.out.lines, pointers=self.pointers, pointer_dtypes=self._pointer_dtypes(mm),
                        sizes=self.sizes, big=self.big, constexprs=constexprs, options=self.schedule.options(),
                        grid=(grid or GridAxis(factors),), host_constexprs=host_constexprs,
                        grid_cap=PERSISTENT_PROGRAMS if p.persistent else "", scratch=scratch,
                        host_prologue=self.prologue, host_buffers=host_buffers,
                        helpers=helpers + tuple(self.module_helpers), fp8_format=p.fp8.name if p.fp8 else "")

    def _pointer_dtypes(self, mm: Matmul) -> dict[str, str]:
        p = self.product
        dtypes = {"partials": "fp32", "counters": "i32"} | ROW_SCRATCH_DTYPES
        if p.fp8 is not None:
            dtypes |= {"fp8_a": p.fp8.triton_type, "fp8_b": p.fp8.triton_type, "fp8_sa": "fp32", "fp8_sb": "fp32"}
        if p.path == "library":   # torch.matmul's output: the operands' dtype
            dtypes |= {b: self.graph.buffer_type(mm.operands[0].base).dtype for b, _ in LIBRARY_PRODUCTS}
        return {b: dtypes[b] if b in dtypes else self.graph.buffer_type(b).dtype for b in self.pointers}

    def _doc(self, mm: Matmul, space: list[SizeExpr], product_text: str) -> str:
        p = self.product
        shape = " x ".join(self.sizes.host(e) for e in space)
        fp32 = self.graph.buffer_type(mm.operands[0].base).dtype == "fp32"
        path = ("GEMV (multiply-adds, one tl.sum)" if p.gemv
                else f"tl.dot ({p.precision if fp32 else 'fp32 accumulator'})")
        if p.path == "library":
            path = "the product from torch.matmul before the launch (the library's GEMM), read tile by tile"
        if p.fp8 is not None:
            path = (f"tl.dot on {p.fp8.name} copies of A and B quantized by _fp8_quantize before the launch "
                    f"({p.precision}: power-of-two scales, fp32 accumulation, rescaled before the epilogue)")
        tiles_text = ("NUM_PROGRAMS programs (one per SM) walk the BLOCK_M x BLOCK_N tiles" if p.persistent
                      else "One BLOCK_M x BLOCK_N tile per program")
        return (f"{product_text} -> ({shape}): {', '.join(self.group.nodes)}. {tiles_text}, {path}"
                + (f", K split over {p.split} programs (last one sums, in order)" if p.split > 1 else "")
                + (", then row reductions over N from per-tile partials (the row block's last tile combines "
                   "them)" if self.row is not None else "") + ".")

