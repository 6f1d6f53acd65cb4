"""Triton source for a GEMM group: a (batched) matrix product plus its pointwise epilogue.

    out[b, m, n] = epilogue(Σ_k A[b, m, k] · B[b, k, n], bias[n], residual[b, m, n], ...)

Iteration: one program per BLOCK_M x BLOCK_N output tile (per batch element, per K split), all in a
1-D grid. Tiles are ordered in groups of GROUP_M tile rows, so programs running together share their
A rows and B columns in L2 (Triton's matmul tutorial). A program walks K in BLOCK_K steps with
`tl.dot` into an fp32 accumulator; A and B are read through their Views (any strides: transposed,
sliced, batch-broadcast), sizes and strides are runtime arguments. The epilogue (bias, activation,
scaling, residual: the group's pointwise nodes, rendered by ExprRenderer) runs on the fp32 tile with
2-D row/column coordinates; each output is stored once, cast to its dtype.

Split-K (split_k > 1): the K tiles are divided over split_k programs per output tile. Each stores its
fp32 partial tile in a scratch buffer and bumps the tile's counter (an atomic); the last to arrive
sums the split_k partials in a fixed order (0, 1, ...) and runs the epilogue. Deterministic: the sum
does not depend on which program arrives last, and a non-linear epilogue sees the whole sum.

Matrix-vector shapes (N == 1 or M == 1 in every variant) take a GEMV path: multiply-adds into a
[BLOCK_M, BLOCK_K] (or [BLOCK_K, BLOCK_N]) fp32 tile and one `tl.sum` at the end, no `tl.dot` (whose
smallest tile is 16 on a side: 15/16 of it would be padding).

Precision (knob "precision", fp32 inputs only): "ieee" (default; full fp32 products), "tf32" or
"tf32x3" (three tf32 products, about fp32 accuracy) through `tl.dot(input_precision=...)`. What each
target accepts is triton 3.6.0's rule (DOT_PRECISIONS); anything else raises CodegenUnsupported
rather than quietly computing in another precision. Triton's interpreter ignores input_precision
(numpy matmul in fp32), so under TRITON_INTERPRET=1 the generated module emulates tf32 by rounding
the operands (codegen/helpers/dot.py): the CPU referee then judges the precision the GPU will compute in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import ClassVar

from kerntailor.capture.generalize import Generalized, SizeExpr
from kerntailor.codegen.helpers import dot_helper, fp8_helpers, math_helper, num_programs, tma_allocator
from kerntailor.codegen.assemble import assemble
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.fused.reductions import FLOAT_IDENTITY
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis, Scratch
from kerntailor.codegen.render import TL_DTYPES, compute_dtype
from kerntailor.codegen.scan import AnchorWriter, _mentions
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import const, product
from kerntailor.errors import KerntailorError
from kerntailor.ir.expr import Load
from kerntailor.ir.nodes import Matmul, Node
from kerntailor.ir.types import View, contiguous_strides
from kerntailor.plan.fusion import FusionGroup
from kerntailor.plan.row_tail import RowTail, row_tail
from kerntailor.precision import FP8_PRECISIONS, Fp8Format, fp8_format, is_fp8
from kerntailor.units import ITEMSIZE, next_power_of_two

FP32_DOT_PRECISIONS = ("ieee", "tf32", "tf32x3")   # what tl.dot's input_precision may say for fp32 operands
PRECISIONS = FP32_DOT_PRECISIONS + FP8_PRECISIONS
MATRIX_DTYPES = ("fp32", "bf16", "fp16")
MIN_DOT = 16          # tl.dot's smallest tile side (triton 3.6 `min_dot_size`: 16 for 16/32-bit operands)
AMD_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")

# input_precision values tl.dot accepts for fp32 operands, per target, in triton 3.6.0:
#   backends/nvidia/compiler.py  CUDAOptions.allowed_dot_input_precisions = tf32, tf32x3, ieee, bf16x3, bf16x6
#   backends/amd/compiler.py     HIPOptions.allowed_dot_input_precisions  = ieee, bf16x3, bf16x6, and
#                                parse_options adds tf32 (XF32 MFMA) for gfx942 only; no tf32x3 on AMD.
# (tests/test_codegen_gemm.py checks this table against the installed triton's backends.)
DOT_PRECISIONS = {"cuda": ("ieee", "tf32", "tf32x3"), "gfx942": ("ieee", "tf32"), "hip": ("ieee",)}

# --- what the pipeline and the search need ---------------------------------------------------------------

PERSISTENT_PROGRAMS = "_num_programs({device})"
PERSISTENT_PROGRAMS_TRACED = 132   # what the build compiles for: an H100 / H200's SM count


def matmul_node(gen: Generalized, group: FusionGroup) -> Matmul:
    node = gen.graph.node(group.nodes[0])
    if not isinstance(node, Matmul):
        raise CodegenUnsupported(f"{group.name}: a matmul group must start with its Matmul node")
    return node


def work_sizes(gen: Generalized, group: FusionGroup) -> dict:
    """{"M", "N", "K"} of the group's product at the traced shapes, the batch folded into M (the search's
    gemm_space and cost model see B·M rows: the same tiles, the same program count up to rounding)."""
    node = matmul_node(gen, group)
    return {"M": prod(node.batch) * node.m, "N": node.n, "K": node.k}


def operand_dtype(gen: Generalized, group: FusionGroup) -> str:
    node = matmul_node(gen, group)
    return gen.graph.buffer_type(node.operands[0].base).dtype


@dataclass(frozen=True, kw_only=True)
class MatmulSchedule(Schedule):
    """BLOCK_M x BLOCK_N output tiles stepping K by BLOCK_K, GROUP_M tile rows swept together (L2 reuse), K
    split over split_k programs, products in `precision` (the user's policy, never tuned). sm_90: TMA tile loads
    and PERSISTENT programs; AMD: matrix_instr_nonkdim and kpack. LIBRARY: the product is torch.matmul's, the
    kernel its epilogue; gemv=False keeps tl.dot for matrix-vector shapes."""

    family: ClassVar[str] = "matmul"
    order: ClassVar[tuple[str, ...]] = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages",
                                        "split_k", "precision", "waves_per_eu", "matrix_instr_nonkdim", "kpack",
                                        "TMA", "PERSISTENT", "LIBRARY", "gemv")
    shown: ClassVar[tuple[str, ...]] = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages",
                                        "split_k", "precision")

    BLOCK_M: int
    BLOCK_N: int
    BLOCK_K: int
    GROUP_M: int = 1
    num_stages: int = 2
    split_k: int = 1
    precision: str = "ieee"
    matrix_instr_nonkdim: int | None = None
    kpack: int | None = None
    TMA: int = 0
    PERSISTENT: int = 0
    LIBRARY: int = 0
    gemv: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
            self.power_of_two(name)
        self.at_least("GROUP_M", 1)
        self.at_least("split_k", 1)
        self.one_of("precision", PRECISIONS)
        for name in ("TMA", "PERSISTENT", "LIBRARY"):
            self.one_of(name, (0, 1))
        self.one_of("gemv", (True, False))
        if self.kpack is not None:
            self.one_of("kpack", (1, 2))
        if self.matrix_instr_nonkdim is not None:
            self.at_least("matrix_instr_nonkdim", 0)


def default_schedule(gen: Generalized, group: FusionGroup) -> MatmulSchedule:
    """A schedule without search, portable across targets.

    Big tiles: 128x128, BLOCK_K 32, 8 warps, GROUP_M 8 (Triton's matmul tutorial; Inductor's common mm
    config). num_stages 3 for 16-bit operands and 2 for fp32: what fits the smallest LDS of the targets,
    gfx942's 64 KiB, by the measured rule in search/families.py ((s - 1) x (A + B) tiles: 32 KiB for a
    128x128x32 fp32 tile pair at 2 stages; sm_90 needs s x (A + B) of its 227 KiB). Small dims get
    tiles rounded up from the size (never below tl.dot's 16). split_k 4 where the output tiles are too
    few to fill a GPU (< 32) and K is long (>= 4096); matrix-vector shapes take the GEMV path with a
    64 x 128 multiply-add tile per program. Every value lies in search/families.py's gemm_space, so the
    pipeline can seed its search with it."""
    node = matmul_node(gen, group)
    batch = prod(node.batch)
    dtype = operand_dtype(gen, group)
    stages = 3 if dtype in ("bf16", "fp16") else 2
    gemv = _gemv_axis(gen, node)
    if gemv:  # the unused block side at 16: the smallest value search/families.py's gemm_space offers
        rows = node.m if gemv == "n" else node.n
        split = 4 if batch * -(-rows // 64) < 32 and node.k >= 4096 else 1
        bm, bn = (64, 16) if gemv == "n" else (16, 64)
        return MatmulSchedule(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=min(128, max(MIN_DOT, next_power_of_two(node.k))),
                              GROUP_M=1, num_warps=4, num_stages=2, split_k=split, precision="ieee")
    bm = min(128, max(MIN_DOT, next_power_of_two(node.m)))
    bn = min(128, max(MIN_DOT, next_power_of_two(node.n)))
    bk = min(32, max(MIN_DOT, next_power_of_two(node.k)))
    warps = 8 if bm * bn >= 128 * 128 else 4 if bm * bn >= 64 * 64 else 2
    tiles = batch * -(-node.m // bm) * -(-node.n // bn)
    split = 4 if tiles < 32 and node.k >= 4096 else 1
    # gemm_space's rule: a group no larger than needed to cover the tile rows, and only on a 2-D grid
    tiles_m, tiles_n = -(-node.m // bm), -(-node.n // bn)
    group_m = 1 if tiles_n == 1 else 8 if tiles_m > 4 else 4 if tiles_m > 1 else 1
    return MatmulSchedule(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m, num_warps=warps, num_stages=stages,
                          split_k=split, precision="ieee")


def check_precision(precision: str, dtype: str, arch: str | None) -> None:
    """Raise CodegenUnsupported when `arch`'s tl.dot cannot compute fp32 products in `precision`."""
    if precision not in PRECISIONS:
        raise CodegenUnsupported(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    if is_fp8(precision):
        fp8_format_of(arch)
        return
    if dtype != "fp32" or arch is None or precision == "ieee":
        return
    allowed = DOT_PRECISIONS["cuda"] if arch.startswith("sm_") else DOT_PRECISIONS.get(arch, DOT_PRECISIONS["hip"])
    if precision not in allowed:
        raise CodegenUnsupported(f"precision {precision} is not available for fp32 matmuls on {arch} "
                                 f"(triton 3.6 tl.dot accepts {', '.join(allowed)} there); "
                                 "use precision ieee")


def fp8_format_of(arch: str | None) -> Fp8Format:
    """The fp8 format of `arch`'s matrix units; CodegenUnsupported where it has none."""
    try:
        return fp8_format(arch)
    except KerntailorError as e:
        raise CodegenUnsupported(str(e)) from None


def generate_gemm(gen: Generalized, group: FusionGroup, schedule: MatmulSchedule, host_names: dict,
                  kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for a matmul group under `schedule`. `arch` (gfx942, sm_90, ...) only decides which
    precisions are allowed (and the fp8 format); the source is otherwise the same for every target."""
    if group.family != "matmul":
        raise CodegenUnsupported(f"{group.name} is a {group.family} group")
    return _GemmWriter(gen, group, schedule, host_names, kernel_name, arch).write()


def _gemv_axis(gen: Generalized, node: Matmul) -> str:
    """"n" when N is 1 in every variant (matrix x vector), "m" when M is (vector x matrix), else ""."""
    n = gen.expr(("node", node.name, "operand", 1, "shape", len(node.operands[1].shape) - 1), node.n)
    m = gen.expr(("node", node.name, "operand", 0, "shape", len(node.operands[0].shape) - 2), node.m)
    if n.is_constant and node.n == 1:
        return "n"
    if m.is_constant and node.m == 1:
        return "m"
    return ""


# --- the writer ------------------------------------------------------------------------------------------

class _GemmWriter(AnchorWriter):
    anchor_type = Matmul

    def __init__(self, gen, group, schedule: MatmulSchedule, host_names, name, arch):
        super().__init__(gen, group, schedule, host_names, name)
        self.arch = arch
        self.dot_helpers: list[str] = []
        self.bases: dict[str, str] = {}
        self.persistent = False                      # set by write(): the PERSISTENT knob, where it applies
        self.tma: tuple[str, str, int] | None = None  # set by _tma_loop: (constexpr, host expression, traced value)
        self.prologue: list[str] = []                # host lines before the launch (fp8 quantize, library product)

    def tail_names(self) -> set[str]:
        """A group the planner gave row reductions (reduce_axes): its row tail (plan/row_tail.py)."""
        self.row: RowTail | None = None
        if not self.group.reduce_axes:
            return set()
        self.row = row_tail(self.graph, list(self.group.nodes), set(self.group.outputs))
        if self.row is None:
            raise CodegenUnsupported(f"{self.group.name}: its row reductions do not combine from tiles")
        return set(self.row.nodes)

    # --- tiles -------------------------------------------------------------------------------------------
    def _blocks(self, gemv: str) -> tuple[int, int, int]:
        s = self.schedule
        bm, bn, bk = s.BLOCK_M, s.BLOCK_N, s.BLOCK_K
        if gemv == "n":
            return bm, 1, bk
        if gemv == "m":
            return 1, bn, bk
        if min(bm, bn, bk) < MIN_DOT:
            raise CodegenUnsupported(f"tl.dot needs tiles of at least {MIN_DOT} per side "
                                     f"(BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk})")
        return bm, bn, bk

    # --- index text ----------------------------------------------------------------------------------
    def _times(self, index: str, stride: SizeExpr) -> str:
        st = self.sizes.text(stride)
        return index if st == "1" else f"{index} * {st}"

    def _base(self, v, strides: list[SizeExpr], offset: SizeExpr, nb: int) -> str:
        """Element offset of batch element (i0, ...) in an operand: its batch strides and view offset."""
        terms = [self._times(f"i{j}", strides[j]) for j in range(nb)
                 if not (v.strides[j] == 0 and strides[j].is_constant) and not (v.shape[j] == 1 and
                                                                               strides[j].is_constant)]
        if not offset.is_constant or offset.coeff + offset.offset != 0:
            terms.append(self.sizes.text(offset))
        return " + ".join(terms) or "0"

    # --- the kernel ----------------------------------------------------------------------------------
    def write(self) -> GeneratedKernel:
        mm: Matmul = self.anchor
        nb = len(mm.batch)
        a, a_shape, a_strides, a_off = self.view_exprs(mm, 0)
        b, b_shape, b_strides, b_off = self.view_exprs(mm, 1)
        if len(a.shape) != nb + 2 or len(b.shape) != nb + 2 or len(mm.out.shape) != nb + 2:
            raise CodegenUnsupported(f"{mm.name}: operands of rank {len(a.shape)}, {len(b.shape)} for "
                                     f"{nb} batch dims")
        dtype = self.graph.buffer_type(a.base).dtype
        if dtype not in MATRIX_DTYPES or self.graph.buffer_type(b.base).dtype != dtype:
            raise CodegenUnsupported(f"{mm.name}: matmul of {dtype} x {self.graph.buffer_type(b.base).dtype}")
        precision = self.schedule.precision
        check_precision(precision, dtype, self.arch)
        gemv = _gemv_axis(self.gen, mm) if self.schedule.gemv else ""
        self.fp8: Fp8Format | None = None
        if is_fp8(precision):  # the kernel reads quantized copies of A and B (and their scales)
            self.fp8 = fp8_format_of(self.arch)
            gemv = ""           # fp8 products take the matrix units (a GEMV reads what it multiplies once)
            (a, a_shape, a_strides, a_off), (b, b_shape, b_strides, b_off) = self._fp8_operands(
                nb, (a, a_shape, a_strides, a_off), (b, b_shape, b_strides, b_off), precision == "fp8-row")
            dtype = "fp8"
        # LIBRARY: the product is torch.matmul's (cuBLAS / hipBLASLt), this kernel only its epilogue and tail
        self.library = bool(self.schedule.LIBRARY)
        if self.library:
            if self.fp8 is not None:
                raise CodegenUnsupported(f"{self.group.name}: the library product under {precision} (not built)")
            gemv = ""
            self.schedule = replace(self.schedule, split_k=1, TMA=0, PERSISTENT=0)
        bm, bn, bk = self._blocks(gemv)
        split = self.schedule.split_k
        group_m = self.schedule.GROUP_M if not gemv else 1
        space = [self.sizes.slot(("node", mm.name, "out", k), s) for k, s in enumerate(mm.out.shape)]
        M, N, K = self.sizes.text(a_shape[-2]), self.sizes.text(b_shape[-1]), self.sizes.text(a_shape[-1])
        # persistent (sm_90's knob): one program per SM walks the output tiles; plain 2-D products only
        self.persistent = bool(self.schedule.PERSISTENT) and not nb and split == 1 and not gemv
        tma = None if gemv else self._tma_plan(nb, split, dtype, (a, a_strides, a_off), (b, b_strides, b_off))
        if self.persistent and tma:  # the descriptors once per program, before its tiles
            self.out("if USE_TMA:")
            self.out.depth += 1
            self._tma_descriptors(tma, M, N, K)
            self.out.depth -= 1

        self._program_ids(nb, space, split, group_m, M, N)
        operands = (a, a_strides, b, b_strides)
        if self.library:
            self._library_product(nb, (a, a_shape, a_strides, a_off), (b, b_shape, b_strides, b_off), M, N)
        else:
            self._operand_bases(nb, (a, a_strides, a_off), (b, b_strides, b_off))
            self._k_range(split, K)
        if gemv:
            self._gemv_loop(gemv, operands, M, N, K)
        elif not self.library:
            if tma:
                self.out("if USE_TMA:  # TMA descriptors: the copy engine fetches the tiles (sm_90)")
                self.out.depth += 1
                self._tma_loop(tma, M, N, K, dtype, precision)
                self.out.depth -= 1
                self.out("else:  # a stride or address TMA cannot take in this call: pointer tiles")
                self.out.depth += 1
            self._dot_loop(operands, M, N, K, dtype, precision)
            if tma:
                self.out.depth -= 1
        self.out("om = rm[:, None]  # output rows, (BLOCK_M, 1)")
        self.out("on = rn[None, :]  # output columns, (1, BLOCK_N)")
        self.out(f"mmask = om < {M}")
        self.out(f"nmask = on < {N}")
        self.coords = {j: f"i{j}" for j in range(nb)} | {nb: "om", nb + 1: "on"}
        self.tile = "[BLOCK_M, BLOCK_N]"
        self.full_mask = "mmask & nmask"
        if split > 1:
            self._split_combine()
        if self.fp8 is not None:
            self._fp8_rescale(nb, M, N)
        self.out(f"v_{mm.name} = acc  # {self._describe(mm, a_shape, b_shape, nb)}, fp32 accumulator")
        self.compute_epilogue()
        if self.row is not None:
            if gemv:
                raise CodegenUnsupported(f"{self.group.name}: row reductions after a matrix-vector product")
            self._row_tail(M, N)
        else:
            self.store_outputs(space)
        if split > 1 or self.persistent:
            self.out.depth -= 1
        return self._finish(mm, space, nb, (bm, bn, bk), group_m, split, gemv, precision,
                            self._describe(mm, a_shape, b_shape, nb))

    # --- the library product: torch.matmul before the launch, this kernel reads it tile by tile --------
    def _library_product(self, nb: int, a_parts, b_parts, M: str, N: str) -> None:
        """Host: lib_prod = torch.matmul(A, B) over the operand views ((B, M, N), the library's output dtype).
        Kernel: acc = this tile of it, in fp32; the epilogue and row tail then run as after tl.dot."""
        a, b = (self._host_view(*parts) for parts in (a_parts, b_parts))
        self.prologue = [f"{{lib_prod}} = torch.matmul({a}, {b})  # the library's GEMM (cuBLAS, hipBLASLt)"]
        prod = self.pointer("lib_prod")
        batch = f"bidx.to(tl.int64) * {M} * {N} + " if nb else ""
        self.out(f"prod_rows = rm[:, None].to(tl.int64) * {N}")
        self.out(f"acc = tl.load({prod} + {batch}prod_rows + rn[None, :], mask=(rm[:, None] < {M}) & (rn[None, :] < {N}), "
                 "other=0.0).to(tl.float32)  # the library's product, this tile")

    def _host_view(self, v, shape: list[SizeExpr], strides: list[SizeExpr], offset: SizeExpr) -> str:
        """Host text of an operand view: torch.as_strided over its buffer ({buffer}: the host's name for it)."""
        host = self.sizes.host
        return (f"torch.as_strided({{{v.base}}}, ({', '.join(host(e) for e in shape)},), "
                f"({', '.join(host(e) for e in strides)},), {host(offset)})")

    # --- fp8: quantized operands (codegen/helpers/fp8_quantize.py) ------------------------------------
    def _fp8_operands(self, nb: int, a_parts, b_parts, per_row: bool):
        """Host lines that quantize A (as ..., M, K) and B (as ..., N, K: K-major) along K before the launch,
        and the views the kernel reads instead: fp8_a (B, M, K) and fp8_b (B, N, K) read as (B, K, N)."""
        views = []
        for which, (v, shape, strides, offset) in zip("ab", (a_parts, b_parts)):
            source = self._host_view(v, shape, strides, offset)
            if which == "b":
                source += ".transpose(-1, -2)"
            kind = next((i.kind for i in self.graph.inputs if i.name == v.base), "")
            weight = f", weight={{{v.base}}}" if kind in ("parameter", "buffer") else ""   # quantized once per version
            self.prologue.append(f"{{fp8_{which}}}, {{fp8_s{which}}} = _fp8_quantize({source}, per_row={per_row}{weight})")
            stored = list(shape[:nb]) + ([shape[-2], shape[-1]] if which == "a" else [shape[-1], shape[-2]])
            concrete = tuple(v.shape[:nb]) + ((v.shape[-2], v.shape[-1]) if which == "a" else (v.shape[-1], v.shape[-2]))
            steps = [product(stored[j + 1:]) if j + 1 < len(stored) else const(1) for j in range(len(stored))]
            if any(st is None for st in steps):
                raise CodegenUnsupported(f"{self.group.name}: fp8 operand sizes are not products of the inputs'")
            conc = contiguous_strides(concrete)
            if which == "b":  # (B, N, K) stored, read as (B, K, N)
                steps[-1], steps[-2] = steps[-2], steps[-1]
                conc = conc[:-2] + (conc[-1], conc[-2])
            views.append((View(f"fp8_{which}", tuple(v.shape), tuple(conc), 0), list(shape), steps, const(0)))
        if fp8_helpers(self.fp8) not in self.dot_helpers:
            self.dot_helpers.append(fp8_helpers(self.fp8))
        self.per_row = per_row
        return views

    def _fp8_rescale(self, nb: int, M: str, N: str) -> None:
        """acc *= s_a[row] · s_b[column] (or the two tensor scales): powers of two, exact."""
        sa, sb = self.pointer("fp8_sa"), self.pointer("fp8_sb")
        if not self.per_row:
            self.out(f"acc = acc * (tl.load({sa}) * tl.load({sb}))  # the operands' power-of-two scales")
            return
        for name, ptr, index, size in (("s_rows", sa, "rm", M), ("s_cols", sb, "rn", N)):
            batch = f"bidx * {size} + " if nb else ""   # one row of scales per batch element
            self.out(f"{name} = tl.load({ptr} + {batch}{index}, mask={index} < {size}, other=1.0)")
        self.out("acc = acc * s_rows[:, None] * s_cols[None, :]  # per-row and per-column power-of-two scales")

    def _describe(self, mm: Matmul, a_shape: list[SizeExpr], b_shape: list[SizeExpr], nb: int) -> str:
        """The product with symbolic sizes (no size of the traced variant in the kernel text)."""
        host = self.sizes.host
        batch = " x ".join(host(e) for e in a_shape[:nb])
        layout = "".join("N" if op.strides[-1] == 1 else "T" for op in mm.operands[:2])
        return (f"{batch + ' x ' if batch else ''}({host(a_shape[-2])} x {host(a_shape[-1])}) @ "
                f"({host(b_shape[-2])} x {host(b_shape[-1])}) [{layout}]")

    def _operand_bases(self, nb: int, *operands) -> None:
        """a_base, b_base: where the program's batch element starts in A and B (and any view offset)."""
        for name, (v, strides, offset) in zip(("a_base", "b_base"), operands):
            base = self._base(v, strides, offset, nb)
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

    def _program_ids(self, nb: int, space: list[SizeExpr], split: int, group_m: int, M: str, N: str) -> None:
        """pid -> (batch coordinates, split, tile row pid_m, tile column pid_n); the K splits of one
        tile are neighbours, then the tiles of one batch element in GROUP_M-row groups."""
        pid = "tl.program_id(0).to(tl.int64)" if self.big else "tl.program_id(0)"
        if self.persistent:  # NUM_PROGRAMS programs (one per SM) walk the tiles; the grid is capped on the host
            self.out(f"num_m = tl.cdiv({M}, BLOCK_M)")
            self.out(f"num_n = tl.cdiv({N}, BLOCK_N)")
            self.out(f"for pid in range({pid}, num_m * num_n, NUM_PROGRAMS):  # persistent: tile after tile")
            self.out.depth += 1
        else:
            self.out(f"pid = {pid}")
            self.out(f"num_m = tl.cdiv({M}, BLOCK_M)")
            self.out(f"num_n = tl.cdiv({N}, BLOCK_N)")
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
        self.out("rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)")
        self.out("rk = tl.arange(0, BLOCK_K)")

    def _rows(self, index: str, size: str, stride: SizeExpr) -> tuple[str, str]:
        """(index text, mask or "") for reading rows/columns of an operand: wrapped modulo the size where
        the axis is not the contiguous one (no mask in the loop; edge tiles re-read valid rows and never
        store them), masked where it is (a wrap would break the contiguity that vectorizes the loads)."""
        if self.sizes.text(stride) == "1":
            return index, f"{index} < {size}"
        return f"({index} % {size})", ""

    def _tma_plan(self, nb: int, split: int, dtype: str, *operands) -> list[tuple] | None:
        """How each operand is read through a TMA descriptor, or None when the TMA knob is off or the
        product does not qualify: batched, split-K, a view offset, or no unit stride in a matrix axis.
        Per operand: (pointer arg, rows stride, rows-axis text, whether the tile is transposed after the
        load, the traced stride in elements). The host checks the rest per call (USE_TMA): strides and
        base addresses 16-byte aligned, as the TMA unit requires."""
        if not self.schedule.TMA or nb or split > 1:
            return None
        plan = []
        for which, (v, strides, offset) in zip("ab", operands):
            if not offset.is_constant or offset.coeff + offset.offset != 0:
                return None
            inner = [self.sizes.text(st) == "1" for st in strides[-2:]]
            if inner == [False, True]:    # rows x K (A) or K x N (B): loaded as stored
                plan.append((which, v, strides[-2], False, v.strides[-2]))
            elif inner == [True, False]:  # stored transposed: load the other way round, transpose the tile
                plan.append((which, v, strides[-1], True, v.strides[-1]))
            else:
                return None
        return plan

    def _tma_descriptors(self, plan, M: str, N: str, K: str) -> None:
        """a_desc: A as [M, K], or [K, M] when A is stored transposed; b_desc: B as [K, N], or [N, K]
        (x @ W.T). Built on the device (global scratch from triton.set_allocator: helpers/host.py)."""
        self.helpers.add("tma_allocator")
        (_, a, a_rows, a_t, _), (_, b, b_rows, b_t, _) = plan
        a_shape, a_block = (f"[{K}, {M}]", "[BLOCK_K, BLOCK_M]") if a_t else (f"[{M}, {K}]", "[BLOCK_M, BLOCK_K]")
        b_shape, b_block = (f"[{N}, {K}]", "[BLOCK_N, BLOCK_K]") if b_t else (f"[{K}, {N}]", "[BLOCK_K, BLOCK_N]")
        self.out(f"a_desc = tl.make_tensor_descriptor({self.pointer(a.base)}, shape={a_shape}, "
                 f"strides=[{self.sizes.text(a_rows)}, 1], block_shape={a_block})")
        self.out(f"b_desc = tl.make_tensor_descriptor({self.pointer(b.base)}, shape={b_shape}, "
                 f"strides=[{self.sizes.text(b_rows)}, 1], block_shape={b_block})")

    def _tma_loop(self, plan, M: str, N: str, K: str, dtype: str, precision: str) -> None:
        (*_, a_t, _), (*_, b_t, _) = plan
        a_at = "[kt * BLOCK_K, pid_m * BLOCK_M]" if a_t else "[pid_m * BLOCK_M, kt * BLOCK_K]"
        b_at = "[pid_n * BLOCK_N, kt * BLOCK_K]" if b_t else "[kt * BLOCK_K, pid_n * BLOCK_N]"
        if not self.persistent:
            self._tma_descriptors(plan, M, N, K)
        self.out("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
        self.out("for kt in range(k_lo, k_hi):  # out-of-bounds rows and columns read as zeros")
        self.out.depth += 1
        self.out(f"a = {'tl.trans(' if a_t else ''}a_desc.load({a_at}){')' if a_t else ''}")
        self.out(f"b = {'tl.trans(' if b_t else ''}b_desc.load({b_at}){')' if b_t else ''}")
        self.out(f"acc = {self._dot_text(dtype, precision)}")
        self.out.depth -= 1
        align = 16 // ITEMSIZE[dtype]
        host = [f"({self.sizes.host(rows)}) % {align} == 0" for _, _, rows, _, _ in plan]
        host += [f"{{{v.base}}}.data_ptr() % 16 == 0" for _, v, _, _, _ in plan]
        traced = all(stride % align == 0 for *_, stride in plan)
        self.tma = ("USE_TMA", " and ".join(dict.fromkeys(host)), int(traced))

    def _dot_loop(self, operands, M: str, N: str, K: str, dtype: str, precision: str) -> None:
        a, a_strides, b, b_strides = operands
        am, am_mask = self._rows("rm", M, a_strides[-2])
        bn, bn_mask = self._rows("rn", N, b_strides[-1])
        self.out("kk = k_lo * BLOCK_K + rk")
        self._pointers("a", a, (f"{am}[:, None]", a_strides[-2]), ("kk[None, :]", a_strides[-1]))
        self._pointers("b", b, ("kk[:, None]", b_strides[-2]), (f"{bn}[None, :]", b_strides[-1]))
        self.out("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
        self.out("for kt in range(k_lo, k_hi):")
        self.out.depth += 1
        self.out(f"k_left = {K} - kt * BLOCK_K")
        a_mask = f"(rk[None, :] < k_left) & ({am_mask})[:, None]" if am_mask else "rk[None, :] < k_left"
        b_mask = f"(rk[:, None] < k_left) & ({bn_mask})[None, :]" if bn_mask else "rk[:, None] < k_left"
        self.out(f"a = tl.load(a_ptrs, mask={a_mask}, other=0.0)")
        self.out(f"b = tl.load(b_ptrs, mask={b_mask}, other=0.0)")
        self.out(f"acc = {self._dot_text(dtype, precision)}")
        self.out(f"a_ptrs += {self._times('BLOCK_K', a_strides[-1])}")
        self.out(f"b_ptrs += {self._times('BLOCK_K', b_strides[-2])}")
        self.out.depth -= 1

    def _pointers(self, which: str, view, *terms: tuple[str, SizeExpr]) -> None:
        """<which>_ptrs: the operand's base pointer, its batch/offset base, and index x stride terms."""
        parts = " + ".join(self._times(index, stride) for index, stride in terms)
        self.out(f"{which}_ptrs = {self.pointer(view.base)}{self.bases[which + '_base']} + {parts}")

    def _dot_text(self, dtype: str, precision: str) -> str:
        if dtype == "fp8":
            if dot_helper("fp8") not in self.dot_helpers:
                self.dot_helpers.append(dot_helper("fp8"))
            return f"_dot_fp8(a, b, acc)  # {self.fp8.name} operands ({precision}), fp32 accumulation"
        if dtype == "fp32" and precision == "ieee":
            return 'tl.dot(a, b, acc, input_precision="ieee")  # full fp32 products'
        helper = precision if dtype == "fp32" else "16bit"
        for name in (("round_tf32",) if helper != "16bit" else ()) + (helper,):
            if dot_helper(name) not in self.dot_helpers:
                self.dot_helpers.append(dot_helper(name))
        what = f"input_precision={precision}" if dtype == "fp32" else f"{dtype} operands, fp32 accumulation"
        return f"_dot_{helper}(a, b, acc)  # {what}"

    def _gemv_loop(self, gemv: str, operands, M: str, N: str, K: str) -> None:
        """Multiply-adds into a [rows, BLOCK_K] fp32 tile, one reduction at the end."""
        a, a_strides, b, b_strides = operands
        self.out("kk = k_lo * BLOCK_K + rk")
        if gemv == "n":   # out[m] = Σ_k A[m, k] · B[k, 0]
            am, am_mask = self._rows("rm", M, a_strides[-2])
            self._pointers("a", a, (f"{am}[:, None]", a_strides[-2]), ("kk[None, :]", a_strides[-1]))
            self._pointers("b", b, ("kk[None, :]", b_strides[-2]))
            self.out("part = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)")
            k_mask, a_mask, b_mask = "rk[None, :] < k_left", am_mask and f"({am_mask})[:, None]", ""
            a_step, b_step, axis = a_strides[-1], b_strides[-2], 1
        else:             # out[n] = Σ_k A[0, k] · B[k, n]
            bn, bn_mask = self._rows("rn", N, b_strides[-1])
            self._pointers("a", a, ("kk[:, None]", a_strides[-1]))
            self._pointers("b", b, ("kk[:, None]", b_strides[-2]), (f"{bn}[None, :]", b_strides[-1]))
            self.out("part = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)")
            k_mask, a_mask, b_mask = "rk[:, None] < k_left", "", bn_mask and f"({bn_mask})[None, :]"
            a_step, b_step, axis = a_strides[-1], b_strides[-2], 0
        self.out("for kt in range(k_lo, k_hi):")
        self.out.depth += 1
        self.out(f"k_left = {K} - kt * BLOCK_K")
        self.out(f"a = tl.load(a_ptrs, mask={_both(k_mask, a_mask)}, other=0.0).to(tl.float32)")
        self.out(f"b = tl.load(b_ptrs, mask={_both(k_mask, b_mask)}, other=0.0).to(tl.float32)")
        self.out("part += a * b")
        self.out(f"a_ptrs += {self._times('BLOCK_K', a_step)}")
        self.out(f"b_ptrs += {self._times('BLOCK_K', b_step)}")
        self.out.depth -= 1
        self.out(f"acc = tl.sum(part, axis={axis}, keep_dims=True)  # (BLOCK_M, BLOCK_N), one side 1")

    def _split_combine(self) -> None:
        """Store this split's partial tile; the last split of the tile sums all of them in order."""
        self.pointer("partials")
        self.pointer("counters")
        self.out("local = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]")
        self.out("tl.store(partials_ptr + pid.to(tl.int64) * (BLOCK_M * BLOCK_N) + local, acc)")
        self._last_to_arrive("arrived", "counters_ptr + tile_id", "SPLIT_K", "the tile's",
                             "the last split: sum the partials in a fixed order, then the epilogue")
        self.out("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)")
        self.out("for s in tl.static_range(SPLIT_K):")
        self.out("    part_id = tile_id.to(tl.int64) * SPLIT_K + s")
        self.out("    acc += tl.load(partials_ptr + part_id * (BLOCK_M * BLOCK_N) + local, volatile=True)")

    def _last_to_arrive(self, name: str, counter: str, count: str, whose: str, then: str) -> None:
        """Open `if <the program is the last of count to arrive>:` after this program's partials are
        stored (split-K's tiles, the row tail's row blocks): every thread's stores come before the
        counter moves (barrier, acq_rel atomic), so the last arriver reads them all."""
        self.out(f"tl.debug_barrier()  # every thread's partials are written before {whose} counter moves")
        self.out(f'{name} = tl.atomic_add({counter}, 1, sem="acq_rel")')
        self.out(f"if {name} == {count} - 1:  # {then}")
        self.out.depth += 1

    # --- the row tail: reductions over N from per-tile partials ---------------------------------------
    def _row_tail(self, M: str, N: str) -> None:
        """Each tile reduces its own columns (its rows' partials, per channel of RowTail.channels) and
        stores them; the last tile of the row block to arrive (a counter per row block, as split-K's)
        combines the partials in tile order (deterministic), then computes and stores the row values.
        Shifted sums Σ exp(u − c) are rescaled by exp(c_t − C) (plan/row_tail.py)."""
        row = self.row
        by_name = {r.name: r for r in row.reductions}
        channels = row.channels
        self.out("# row tail: this tile's share of each row reduction (columns past N count as the identity)")
        needed = set(channels)
        for name in reversed(row.nodes):   # what the partials need (not the row values after them)
            if name in needed:
                needed.update(v.base for v in self.graph.node(name).operands if v.base in row.nodes)
        for name in (n for n in row.nodes if n in needed):
            node = self.graph.node(name)
            if name in by_name:
                op = by_name[name].op
                self.out(f"v_{name} = tl.{op}(tl.where(nmask, v_{node.operands[0].base}, {FLOAT_IDENTITY[op]}), axis=1, "
                         f"keep_dims=True)  # {node.describe()} over this tile")
            else:
                self.compute_node(node)
        parts, counters = self.pointer("row_partials"), self.pointer("row_counters")
        self.out(f"tiles_n = tl.cdiv({N}, BLOCK_N)")
        self.out(f"rows_pad = tl.cdiv({M}, BLOCK_M) * BLOCK_M")
        for ch, name in enumerate(channels):
            self.out(f"tl.store({parts} + {_channel_rows(ch)} * tiles_n + pid_n, v_{name})")
        self._last_to_arrive("row_arrived", f"{counters} + pid_m", "tiles_n", "the row block's",
                             "the row block's last tile: combine its partials in tile order")
        self.out("rt = tl.arange(0, ROW_PARTS)[None, :]")
        for name in row.nodes:
            node = self.graph.node(name)
            if name not in by_name:
                if name in row.reduced:
                    self.compute_node(node)   # again, from the combined values
                continue
            r = by_name[name]
            fn, ident = f"tl.{r.op}", FLOAT_IDENTITY[r.op]
            at = f"{parts} + {{rows}} * tiles_n + t0 + rt"
            self.out(f"acc_{name} = tl.full([BLOCK_M, ROW_PARTS], {ident if not r.shift else '0.0'}, tl.float32)")
            self.out("for t0 in range(0, tiles_n, ROW_PARTS):")
            self.out.depth += 1
            self.out("tmask = t0 + rt < tiles_n")
            part = f"tl.load({at.format(rows=_channel_rows(channels.index(name)))}, mask=tmask, other={ident}, volatile=True)"
            if r.shift:   # Σ_t s_t · exp(c_t − C): each tile summed exp(u − c_t)
                self.out(f"c_t = tl.load({at.format(rows=_channel_rows(channels.index(r.shift)))}, mask=tmask, "
                         "other=0.0, volatile=True)")
                self.out(f"acc_{name} += tl.where(tmask, {part} * tl.exp(c_t - v_{r.shift}), 0.0)")
            else:
                self.out(f"acc_{name} = {_TAIL_COMBINE[r.op].format(a=f'acc_{name}', b=part)}")
            self.out.depth -= 1
            self.out(f"v_{name} = {fn}(acc_{name}, axis=1, keep_dims=True)  # {node.describe()}")
        for name in self.group.outputs:
            node = self.graph.node(name)
            value = f"v_{name}"
            if node.out.dtype != compute_dtype(node.out.dtype):
                value = f"{value}.to({TL_DTYPES[node.out.dtype]})"
            self.out(f"tl.store({self.pointer(name)} + om, {value}, mask=mmask)  # one value per row")
        self.out.depth -= 1

    # --- the epilogue's loads: only the tile axes an operand varies along ----------------------------
    def tile_axes(self) -> list[list[str]]:
        return [["om", "rm"], ["on", "rn"]]

    def leaf(self, node: Node):
        full = super().leaf(node)

        def render(load: Load, gather: str | None = None, valid: str | None = None, i: int = 0) -> str:
            view = node.operands[load.operand]
            if self.row is not None and view.base in self.row.reduced and gather is None and valid is None:
                return f"v_{view.base}"   # a row value, (BLOCK_M, 1): row_tail checked how it is read
            if view.base in self.members or gather is not None or valid is not None:
                return full(load, gather, valid, i)
            if len(view.shape) != len(self.anchor.out.shape):
                raise CodegenUnsupported(f"{node.name} operand {load.operand} has rank {len(view.shape)}")
            offset = self.operand_offset(node, load.operand, self.coords)
            # read only the tile axes the operand varies along: a bias is one (1, BLOCK_N) row, not a
            # tile of repeated addresses; its mask is that axis's
            masks = [m for name, m in (("om", "mmask"), ("on", "nmask")) if _mentions(offset, name)]
            mask = f", mask={' & '.join(masks)}, other=0" if masks else ""
            text = f"tl.load({self.pointer(view.base)} + ({offset}){mask})"
            dtype = self.graph.buffer_type(view.base).dtype
            if compute_dtype(dtype) != dtype:
                text = f"{text}.to({TL_DTYPES[compute_dtype(dtype)]})"
            return self.cached_load(text)
        return render

    # --- the launch ----------------------------------------------------------------------------------
    def _finish(self, mm: Matmul, space: list[SizeExpr], nb: int, blocks, group_m: int, split: int, gemv: str,
                precision: str, product_text: str) -> GeneratedKernel:
        bm, bn, bk = blocks
        dtypes = {"partials": "fp32", "counters": "i32", "row_partials": "fp32", "row_counters": "i32"}
        if self.fp8 is not None:
            dtypes |= {"fp8_a": self.fp8.triton_type, "fp8_b": self.fp8.triton_type, "fp8_sa": "fp32",
                       "fp8_sb": "fp32"}
        if self.library:   # torch.matmul's output: the operands' dtype
            dtypes["lib_prod"] = self.graph.buffer_type(mm.operands[0].base).dtype
        dtypes = {b: dtypes[b] if b in dtypes else self.graph.buffer_type(b).dtype for b in self.pointers}
        constexprs = [("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_K", bk)]
        constexprs += [("GROUP_M", group_m)] if group_m > 1 else []
        constexprs += [("SPLIT_K", split)] if split > 1 else []
        if self.row is not None:  # combine chunk: partials of this many tiles per load (any N)
            tiles_n = -(-self.anchor.n // bn)
            constexprs += [("ROW_PARTS", max(2, min(32, next_power_of_two(tiles_n))))]
        tma = self.tma
        constexprs += [(tma[0], tma[2])] if tma else []
        host_constexprs = ((tma[0], tma[1]),) if tma else ()
        if self.persistent:  # the build compiles for the traced GPU's count (an H200's 132 SMs)
            constexprs += [("NUM_PROGRAMS", PERSISTENT_PROGRAMS_TRACED)]
            host_constexprs += (("NUM_PROGRAMS", PERSISTENT_PROGRAMS),)
        shape = " x ".join(self.sizes.host(e) for e in space)
        fp32 = self.graph.buffer_type(mm.operands[0].base).dtype == "fp32"
        path = "GEMV (multiply-adds, one tl.sum)" if gemv else f"tl.dot ({precision if fp32 else 'fp32 accumulator'})"
        if self.library:
            path = "the product from torch.matmul before the launch (the library's GEMM), read tile by tile"
        if self.fp8 is not None:
            path = (f"tl.dot on {self.fp8.name} copies of A and B quantized by _fp8_quantize before the launch "
                    f"({precision}: power-of-two scales, fp32 accumulation, rescaled before the epilogue)")
        tiles_text = ("NUM_PROGRAMS programs (one per SM) walk the BLOCK_M x BLOCK_N tiles" if self.persistent
                      else "One BLOCK_M x BLOCK_N tile per program")
        doc = (f"{product_text} -> ({shape}): {', '.join(self.group.nodes)}. {tiles_text}, {path}"
               + (f", K split over {split} programs (last one sums, in order)" if split > 1 else "")
               + (", then row reductions over N from per-tile partials (the row block's last tile combines "
                  "them)" if self.row is not None else "") + ".")
        if self.persistent:
            self.helpers.add("num_programs")
        own = {"tma_allocator": tma_allocator, "num_programs": num_programs}
        helpers = tuple(own[h]() if h in own else math_helper(h) for h in sorted(self.helpers)) + tuple(self.dot_helpers)
        batch = [space[j] for j in range(nb)]
        tiles = tuple((e, 1) for e in batch) + ((space[nb], bm), (space[nb + 1], bn))
        factors = tiles + (((const(split), 1),) if split > 1 else ())
        scratch = ()
        if split > 1:  # partial tiles (every element written before it is read: not zeroed) and counters
            scratch = (Scratch("partials", "fp32", factors + ((const(bm * bn), 1),), False),
                       Scratch("counters", "i32", tiles))
        if self.row is not None:  # every partial is written before it is read; the counters start at 0
            row_blocks = tuple((e, 1) for e in batch) + ((space[nb], bm),)
            channels = const(bm * len(self.row.channels))
            scratch += (Scratch("row_partials", "fp32", row_blocks + ((space[nb + 1], bn), (channels, 1)), False),
                        Scratch("row_counters", "i32", row_blocks))
        host_buffers = (("fp8_a", "fp8_sa", "fp8_b", "fp8_sb") if self.fp8 is not None else
                        ("lib_prod",) if self.library else ())
        return assemble(group=self.group.name, name=self.name, doc=doc, body=self.out.lines, pointers=self.pointers,
                        pointer_dtypes=dtypes, sizes=self.sizes, big=self.big, constexprs=constexprs,
                        options=self.schedule.options(),
                        grid=(GridAxis(factors),), host_constexprs=host_constexprs,
                        grid_cap=PERSISTENT_PROGRAMS if self.persistent else "", scratch=scratch,
                        host_prologue=self.prologue, host_buffers=host_buffers, helpers=helpers,
                        fp8_format=self.fp8.name if self.fp8 is not None else "")


_TAIL_COMBINE = {"sum": "{a} + {b}", "max": "tl.maximum({a}, {b})", "min": "tl.minimum({a}, {b})"}


def _channel_rows(ch: int) -> str:
    """Row index, in int64, of the output rows `om` in partial channel `ch` (rows_pad rows per channel)."""
    return f"(om + {ch} * rows_pad).to(tl.int64)" if ch else "om.to(tl.int64)"


def _both(a: str, b: str) -> str:
    return f"({a}) & {b}" if b else a


__all__ = ["DOT_PRECISIONS", "PRECISIONS", "MatmulSchedule", "check_precision", "default_schedule", "generate_gemm",
           "matmul_node", "work_sizes"]
