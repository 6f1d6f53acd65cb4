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

from kerntailor.capture.generalize import Generalized
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel
from kerntailor.codegen.schedule import Schedule
from kerntailor.errors import KerntailorError
from kerntailor.ir.nodes import Matmul
from kerntailor.plan.dual import products
from kerntailor.plan.fusion import FusionGroup
from kerntailor.plan.horizontal import branches
from kerntailor.precision import FP8_PRECISIONS, Fp8Format, fp8_format, is_fp8
from kerntailor.units import next_power_of_two

FP32_DOT_PRECISIONS = ("ieee", "tf32", "tf32x3")   # what tl.dot's input_precision may say for fp32 operands
PRECISIONS = FP32_DOT_PRECISIONS + FP8_PRECISIONS
MATRIX_DTYPES = ("fp32", "bf16", "fp16")
MIN_DOT = 16          # tl.dot's smallest tile side (triton 3.6 `min_dot_size`: 16 for 16/32-bit operands)

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
    gemm_space and cost model see B·M rows: the same tiles, the same program count up to rounding); "P": 2 for a
    dual group (plan/dual.py: two products of one A, two accumulators). A horizontal group (plan/horizontal.py: H
    products of one A, one accumulator a program) is one GEMM of their N side by side: N is their sum (A once, each
    B and C once, the FLOPs of all), "H" their count."""
    node = matmul_node(gen, group)
    nodes = [gen.graph.node(n) for n in group.nodes]
    split = branches(nodes)
    if split is not None:
        return {"M": node.m, "N": sum(b[0].n for b in split), "K": node.k, "H": len(split)}
    dual = len(products(nodes)) > 1
    return {"M": prod(node.batch) * node.m, "N": node.n, "K": node.k} | ({"P": 2} if dual else {})


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

    @property
    def library_product(self) -> bool:
        return bool(self.LIBRARY)

    def library_forms(self) -> tuple[MatmulSchedule, ...]:
        return (replace(self, TMA=0, PERSISTENT=0, split_k=1, LIBRARY=1),)


def default_schedule(gen: Generalized, group: FusionGroup) -> MatmulSchedule:
    """A schedule without search, portable across targets.

    Big tiles: 128x128, BLOCK_K 32, 8 warps, GROUP_M 8 (Triton's matmul tutorial; Inductor's common mm
    config). num_stages 3 for 16-bit operands and 2 for fp32: what fits the smallest LDS of the targets,
    gfx942's 64 KiB, by the measured rule in search/families.py ((s - 1) x (A + B) tiles: 32 KiB for a
    128x128x32 fp32 tile pair at 2 stages; sm_90 needs s x (A + B) of its 227 KiB). Small dims get
    tiles rounded up from the size (never below tl.dot's 16). split_k 4 where the output tiles are too
    few to fill a GPU (< 32) and K is long (>= 4096); matrix-vector shapes take the GEMV path with a
    64 x 128 multiply-add tile per program. Every value lies in search/families.py's gemm_space, so the
    pipeline can seed its search with it.

    A dual group (plan/dual.py: two accumulators) takes tl.dot tiles (no GEMV path) and no split-K (its writer
    builds neither), warps by both accumulators, and with fp32 operands BLOCK_N at most 64: two 128 x 128 fp32
    accumulators over 8 warps spilled 16 B a thread on sm_90 (255 registers; tl.dot on fp32 is FMA there), 128 x 64
    none on sm_90 nor gfx942 (cross-compiled 2026-12-04, 2 x (256 x 256) @ (256 x 512)); 16-bit operands keep
    128 x 128 (169 registers on sm_90, 152 VGPRs on gfx942, no spills). A horizontal group (plan/horizontal.py)
    takes one product's tiles, BLOCK_N by its widest product, tl.dot tiles and no split-K (its writer builds
    neither), GROUP_M by the column tiles of all its products."""
    node = matmul_node(gen, group)
    batch = prod(node.batch)
    dtype = operand_dtype(gen, group)
    stages = 3 if dtype in ("bf16", "fp16") else 2
    sizes = work_sizes(gen, group)
    dual, columns = sizes.get("P", 1), [b[0].n for b in branches([gen.graph.node(n) for n in group.nodes]) or ()]
    gemv = gemv_axis(gen, node) if dual == 1 and not columns else ""
    if gemv:  # the unused block side at 16: the smallest value search/families.py's gemm_space offers
        rows = node.m if gemv == "n" else node.n
        split = 4 if batch * -(-rows // 64) < 32 and node.k >= 4096 else 1
        bm, bn = (64, 16) if gemv == "n" else (16, 64)
        return MatmulSchedule(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=min(128, max(MIN_DOT, next_power_of_two(node.k))),
                              GROUP_M=1, num_warps=4, num_stages=2, split_k=split, precision="ieee")
    bm = min(128, max(MIN_DOT, next_power_of_two(node.m)))
    bn = min(128 if dual == 1 or dtype != "fp32" else 64, max(MIN_DOT, next_power_of_two(max(columns or [node.n]))))
    bk = min(32, max(MIN_DOT, next_power_of_two(node.k)))
    acc = dual * bm * bn
    warps = 8 if acc >= 128 * 128 else 4 if acc >= 64 * 64 else 2
    tiles_m, tiles_n = -(-node.m // bm), sum(-(-n // bn) for n in columns or [node.n])
    split = 4 if batch * tiles_m * tiles_n < 32 and node.k >= 4096 and dual == 1 and not columns else 1
    # gemm_space's rule: a group no larger than needed to cover the tile rows, and only on a 2-D grid
    group_m = 1 if tiles_n == 1 else 8 if tiles_m > 4 else 4 if tiles_m > 1 else 1
    return MatmulSchedule(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m, num_warps=warps, num_stages=stages,
                          split_k=split, precision="ieee", gemv=dual == 1 and not columns)


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


def gemv_axis(gen: Generalized, node: Matmul) -> str:
    """"n" when N is 1 in every variant (matrix x vector), "m" when M is (vector x matrix), else ""."""
    n = gen.expr(("node", node.name, "operand", 1, "shape", len(node.operands[1].shape) - 1), node.n)
    m = gen.expr(("node", node.name, "operand", 0, "shape", len(node.operands[0].shape) - 2), node.m)
    if n.is_constant and node.n == 1:
        return "n"
    if m.is_constant and node.m == 1:
        return "m"
    return ""


@dataclass(frozen=True)
class Product:
    """How a GEMM kernel gets its fp32 accumulator tile, decided once from the schedule, the product's shape
    and the target (`choose_product`): `tl.dot` over tiles of A and B ("dot": pointer tiles, or TMA tiles where
    the knob asks and the views allow; of quantized copies under fp8), multiply-adds and one `tl.sum` ("gemv":
    a matrix-vector product), or torch.matmul's product read tile by tile ("library")."""

    path: str                       # "dot" | "gemv" | "library"
    precision: str
    fp8: Fp8Format | None           # the format A and B are quantized to ("dot" on fp8 copies)
    gemv: str                       # the vector side of the GEMV path: "n" (N == 1) or "m" (M == 1)
    blocks: tuple[int, int, int]    # BLOCK_M, BLOCK_N, BLOCK_K (the vector side's block is 1)
    split: int                      # K split over this many programs
    group_m: int
    persistent: bool                # one program per SM walks the tiles
    tma: bool                       # the TMA knob applies (the views and, per call, the host decide the rest)


def choose_product(schedule: MatmulSchedule, gen: Generalized, mm: Matmul, dtype: str, arch: str | None,
                   group: str) -> Product:
    """The product path of a matmul group under `schedule` (CodegenUnsupported where it cannot be built)."""
    precision = schedule.precision
    check_precision(precision, dtype, arch)
    gemv = gemv_axis(gen, mm) if schedule.gemv else ""
    fp8 = None
    if is_fp8(precision):   # fp8 products take the matrix units (a GEMV reads what it multiplies once)
        fp8, gemv = fp8_format_of(arch), ""
    library = bool(schedule.LIBRARY)   # torch.matmul's product (cuBLAS / hipBLASLt): the kernel is the epilogue
    if library:
        if fp8 is not None:
            raise CodegenUnsupported(f"{group}: the library product under {precision} (not built)")
        gemv = ""
    split = 1 if library else schedule.split_k
    nb = len(mm.batch)
    return Product("library" if library else "gemv" if gemv else "dot", precision, fp8, gemv, _blocks(schedule, gemv),
                   split, schedule.GROUP_M if not gemv else 1,
                   bool(schedule.PERSISTENT) and not library and not nb and split == 1 and not gemv,
                   bool(schedule.TMA) and not library and not gemv and not nb and split == 1)


def _blocks(schedule: MatmulSchedule, gemv: str) -> tuple[int, int, int]:
    bm, bn, bk = schedule.BLOCK_M, schedule.BLOCK_N, schedule.BLOCK_K
    if gemv == "n":
        return bm, 1, bk
    if gemv == "m":
        return 1, bn, bk
    if min(bm, bn, bk) < MIN_DOT:
        raise CodegenUnsupported(f"tl.dot needs tiles of at least {MIN_DOT} per side "
                                 f"(BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk})")
    return bm, bn, bk


def generate_gemm(gen: Generalized, group: FusionGroup, schedule: MatmulSchedule, host_names: dict,
                  kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for a matmul group under `schedule`. `arch` (gfx942, sm_90, ...) only decides which
    precisions are allowed (and the fp8 format); the source is otherwise the same for every target."""
    from kerntailor.codegen.gemm.horizontal import HorizontalWriter
    from kerntailor.codegen.gemm.writer import GemmWriter

    if group.family != "matmul":
        raise CodegenUnsupported(f"{group.name} is a {group.family} group")
    if schedule.LIBRARY and set(group.outputs) == set(group.nodes) and not group.reduce_axes \
            and not is_fp8(schedule.precision) and all(isinstance(gen.graph.node(n), Matmul) for n in group.nodes):
        from kerntailor.codegen.library import LibrarySchedule, generate_library

        # the library form of a group that is its products alone (one, or a horizontal group's Q, K and V):
        # torch.matmul defines each output on the host, no kernel copies it tile by tile (33.5 MB read and written
        # again for a 4096 x 4096 bf16 output on the H200, 2026-12-05)
        return generate_library(gen, replace(group, family="library"), LibrarySchedule(), host_names, kernel_name,
                                arch)
    horizontal = branches([gen.graph.node(n) for n in group.nodes]) is not None
    writer = HorizontalWriter if horizontal else GemmWriter
    return writer(gen, group, schedule, host_names, kernel_name, arch).write()


__all__ = ["DOT_PRECISIONS", "PRECISIONS", "MatmulSchedule", "Product", "check_precision", "choose_product",
           "default_schedule", "generate_gemm", "gemv_axis", "matmul_node", "work_sizes"]
