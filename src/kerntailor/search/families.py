"""The search spaces of the kernel families, and what a Config of each implies (grid, loop trips, LDS).

    space = gemm_space(get_target("mi300x"), M=8192, N=8192, K=8192, dtype="fp16")
    space = reduction_space(get_target("h200"), R=4096, X=16384)        # rows of R reduced, X rows
    space = pointwise_space(get_target("mi355x"), numel=1 << 24)
    space = make_space("matmul", target, M=..., N=..., K=...)     # by the plan's family name: SPACE_FAMILIES

Each family is one `SpaceFamily` entry (SPACE_FAMILIES at the end): its space, its known-good seeds, and what a
Config of it implies for the cost model (programs, loop trips, padding, the values a program holds, its LDS, the
launches and partials of a split, the vector instructions it issues beyond its FLOPs); nothing here, nor in the cost
model, switches on a family name.

Rules every family shares (sources in brackets):
- threads per block = num_warps x warp size <= 1024 (CUDA's limit and HIP's default flat work-group
  size; `build/limits.py`); the wave is 64 lanes on AMD CDNA, 32 on NVIDIA (`Target.warp_size`).
- AMD-only compile options appear only where `target.vendor == "amd"`: `waves_per_eu` (0, 1, 2, 4) on
  every family; `matrix_instr_nonkdim` (16, 32) and `kpack` (1, 2) on gemm, with kpack forced to 1 on
  gfx950 (gpu-facts.md, ROCm's Triton tuning guide).
- Tiles no bigger than the problem warrants: a block dimension stops at the problem size rounded up to a
  power of two (never below the family's smallest tile).

Register budget of the non-matrix families: a block's tile lives in registers, so its elements per thread
(tile / threads, counted in 32-bit registers: fp64 takes 2, 16-bit values are upcast to fp32) are at most
64. A predicted bound: 64 fp32 values plus addresses and temporaries stay well under NVIDIA's 255
registers, and leave AMD kernels at 128 VGPRs or fewer (4 waves per SIMD). Gemm: at most 128 fp32
accumulators per thread; measured by cross-compiling a plain Triton matmul with triton 3.6.0 (no GPU):
128 per thread compiled without spills on gfx942 (128x128 and 256x128 tiles, 4 waves: 196-340 VGPRs) and
sm_90 (128x128, 4 warps: 206-236 registers); 256 per thread spilled on both (gfx942 256x256 4 waves: 512
VGPRs, 93-160 spilled; sm_90 256x128 4 warps: 255 registers, 1.4-2.0 KB of spills).

Gemm LDS (shared memory) per block, measured the same way for 128x64x64, 128x128x64 and 256x128x32 fp16
tiles at num_stages 1-3 (A tile = BLOCK_M x BLOCK_K, B tile = BLOCK_K x BLOCK_N):
  gfx942: num_stages 1 -> max(A, B) bytes (the two operands share one buffer in turn);
          num_stages s >= 2 -> (s - 1) x (A + B).
  sm_90:  num_stages s -> s x (A + B).
The build stage reads the real figure (`IsaFacts.lds_bytes`) and rejects what does not fit; this estimate
only keeps hopeless tiles out of the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kerntailor.search.config import Config
from kerntailor.search.space import Constraint, Knob, Space, power_of_two_range
from kerntailor.targets.roofline import dtype_key
from kerntailor.targets.spec import Target
from kerntailor.units import ITEMSIZE, next_power_of_two

MAX_THREADS_PER_BLOCK = 1024
MAX_TILE_REGS_PER_THREAD = 64      # non-matrix families; see the module docstring
MAX_ACC_PER_THREAD = 128           # gemm fp32 accumulators per thread; see the module docstring

NUM_WARPS = (1, 2, 4, 8, 16, 32)
WAVES_PER_EU = (0, 1, 2, 4)
MATRIX_INSTR_NONKDIM = (16, 32)
KPACK = (1, 2)
KPACK_FORCED_1 = ("gfx950",)       # the compiler forces kpack=1 there (gpu-facts.md)
GROUP_M = (1, 4, 8)
SPLIT_K = (1, 2, 4, 8)
SPLIT_ROWS_MIN_R = 1 << 14          # rows shorter than this are not split (two launches and the partials' bytes)


def itemsize(dtype: str) -> int:
    return ITEMSIZE[dtype_key(dtype)]


def _regs_per_value(dtype: str) -> int:
    return max(1, itemsize(dtype) // 4)


def _threads(values: Mapping[str, Any], target: Target) -> int:
    return values["num_warps"] * target.warp_size


def _common_constraints(target: Target) -> list[Constraint]:
    return [Constraint(f"num_warps x {target.warp_size} threads <= {MAX_THREADS_PER_BLOCK}", ("num_warps",),
                       lambda v: _threads(v, target) <= MAX_THREADS_PER_BLOCK)]


def _amd_knobs(target: Target, *, matrix: bool) -> list[Knob]:
    if not target.is_amd:
        return []
    knobs = [Knob("waves_per_eu", WAVES_PER_EU)]
    if matrix:
        kpack = (1,) if target.arch in KPACK_FORCED_1 else KPACK
        knobs += [Knob("matrix_instr_nonkdim", MATRIX_INSTR_NONKDIM), Knob("kpack", kpack)]
    return knobs


def _hopper(target: Target) -> bool:
    return target.backend == "cuda" and target.arch.startswith("sm_90")


def _tma_knobs(target: Target) -> list[Knob]:
    """On Hopper (codegen/gemm.py): TMA (0, 1), tiles read through tensor descriptors; PERSISTENT (0, 1),
    one program per SM walking the output tiles."""
    return [Knob("TMA", (0, 1)), Knob("PERSISTENT", (0, 1))] if _hopper(target) else []


def _tile_constraints(target: Target, tile: Callable[[Mapping[str, Any]], int], knobs: tuple[str, ...],
                      dtype: str) -> list[Constraint]:
    """Elements per thread within the register budget, and no idle lanes (one warp excepted)."""
    regs = _regs_per_value(dtype)
    budget = MAX_TILE_REGS_PER_THREAD
    return [
        Constraint(f"tile <= {budget} 32-bit values per thread", knobs,
                   lambda v: tile(v) * regs <= budget * _threads(v, target)),
        Constraint("tile >= one element per thread (or a single warp)", knobs,
                   lambda v: v["num_warps"] == 1 or tile(v) >= _threads(v, target)),
    ]


# --- pointwise -------------------------------------------------------------------------------------------

def pointwise_space(target: Target, *, numel: int, dtype: str = "fp32", permuted: int = 0) -> Space:
    """One program per XBLOCK elements. Knobs: XBLOCK, num_warps (+ waves_per_eu on AMD); where a load may be
    permuted against the output (`permuted` 1: codegen's pointwise_work_sizes), tile2d (the writer's default
    first) and YBLOCK, the 2-D tile's rows (XBLOCK / YBLOCK columns)."""
    top = max(64, next_power_of_two(numel))
    knobs = [Knob("XBLOCK", power_of_two_range(64, min(top, 16384))), Knob("num_warps", NUM_WARPS),
             *_amd_knobs(target, matrix=False)]
    constraints = _common_constraints(target) + _tile_constraints(
        target, lambda v: v["XBLOCK"], ("XBLOCK", "num_warps"), dtype)
    if permuted:
        knobs += [Knob("tile2d", (True, False)), Knob("YBLOCK", (32, 16, 64))]
        constraints.append(Constraint("YBLOCK < XBLOCK (at least two columns)", ("XBLOCK", "YBLOCK"),
                                      lambda v: v["YBLOCK"] < v["XBLOCK"]))
    sizes = (("numel", numel),) + ((("permuted", 1),) if permuted else ())
    return Space("pointwise", tuple(knobs), tuple(constraints), target.name, sizes, dtype_key(dtype))


# --- reduction ---------------------------------------------------------------------------------------------

def reduction_space(target: Target, *, R: int, X: int, dtype: str = "fp32", on_gpu: bool = False,
                    strided: int = 0) -> Space:
    """X rows, each reducing R elements; a program handles XBLOCK rows, RBLOCK elements at a time.

    `strided` 1 (codegen's reduction_work_sizes: the reduced axes are not the innermost, so the rows are the
    contiguous axis) widens XBLOCK up to STRIDED_XBLOCK_MAX and RBLOCK down to STRIDED_RBLOCK_MIN: tiles whose
    warps all lie across the rows (XBLOCK = the warp size x num_warps), each thread reducing its own RBLOCK
    elements of a row alone (strided_seeds says which won where on the H200; reduction_seeds offers them first).

    persistent=True holds a whole row in registers (one pass, RBLOCK = R rounded up to a power of two);
    persistent=False loops over the row in RBLOCK chunks (only when RBLOCK < that, else it is the
    persistent kernel). num_stages pipelines the loop: 1 only on AMD (ROCm's guide: 1 with no GEMM) and
    for persistent kernels (no loop).

    A looped kernel's tile fits the registers one of its threads can have with its accumulators (looped_registers
    <= register_cap): 35_GroupNorm_'s RBLOCK 65536 on 32 warps spilled 3.2 KB on sm_90 (13.1 ms on the H200,
    torch.compile 5.4 ms).

    Few rows (1 <= X < 2 x the target's CUs) of at least SPLIT_ROWS_MIN_R elements add the knob SPLIT: 0, or
    SPLIT programs per row (codegen/fused/splitrows.py: a partials kernel, then the normalising one; one row
    with row outputs only: split.py's one kernel), looped, each program at least one RBLOCK of its row, at most
    8 programs per CU in all, on tiles whose partials kernel fits the registers one of its threads can have
    (split_registers <= register_cap: no spills). One row was left out before: a whole-tensor norm with a
    full-size output got one program (KernelBench's 37_FrobeniusNorm_: 994 ms on the H200, torch.compile 2.6 ms).

    on_gpu (the search runs on the target's GPU, its referee too: never under Triton's interpreter) adds COOP (0, 1)
    to a space with SPLIT: a cooperative split (splitrows.py's write_cooperative), offered only where it cannot
    hang (cooperative_constraints), with its own knobs (cooperative_knobs: REUSE, and maxnreg on NVIDIA).
    """
    r_top = next_power_of_two(R)
    x_top, r_low = (STRIDED_XBLOCK_MAX, STRIDED_RBLOCK_MIN) if strided else (short_rows_top(r_top), 16)
    knobs = [
        Knob("XBLOCK", power_of_two_range(1, min(max(1, next_power_of_two(X)), x_top))),
        Knob("RBLOCK", power_of_two_range(min(r_low, r_top), r_top)),
        Knob("num_warps", NUM_WARPS),
        Knob("num_stages", (1,) if target.is_amd else (1, 2, 3)),
        Knob("persistent", (False, True)),
        *_amd_knobs(target, matrix=False),
    ]
    constraints = _common_constraints(target) + _tile_constraints(
        target, lambda v: v["XBLOCK"] * v["RBLOCK"], ("XBLOCK", "RBLOCK", "num_warps"), dtype) + [
        Constraint(f"persistent iff RBLOCK >= {r_top} (R={R} rounded up to a power of two)",
                   ("RBLOCK", "persistent"), lambda v: v["persistent"] == (v["RBLOCK"] >= r_top)),
        Constraint("num_stages > 1 only for a looped kernel", ("num_stages", "persistent"),
                   lambda v: v["num_stages"] == 1 or not v["persistent"]),
    ]
    constraints.append(Constraint(
        "a looped kernel's accumulators and loaded tile fit the registers a thread can have",
        ("XBLOCK", "RBLOCK", "num_warps", "persistent") + (("waves_per_eu",) if target.is_amd else ()),
        lambda v: v["persistent"] or looped_registers(v, target) <= register_cap(v, target)))
    splits = row_splits(target, R=R, X=X, dtype=dtype, strided=strided)
    if splits:
        waves = row_waves(target, R=R, X=X, dtype=dtype)
        coop_splits = cooperative_splits(target, R=R) if on_gpu and cooperative_target(target) else ()
        coop = bool(coop_splits)
        knobs.append(Knob("SPLIT", (0,) + tuple(sorted(set(splits) | set(coop_splits)))))
        if waves:
            knobs.append(Knob("WAVE", (0,) + waves))
            constraints += _wave_constraints(target, R=R, X=X, dtype=dtype, names=("COOP",) if coop else ())
        if coop:
            knobs += [Knob("COOP", (0, 1)), *cooperative_knobs(target, dtype)]
            constraints += cooperative_constraints(target, R=R, waves=bool(waves), splits=splits) \
                + cooperative_knob_constraints(target, dtype)
        wave = (lambda v: v.get("WAVE", 0)) if waves else (lambda v: 0)
        coop_of = (lambda v: v.get("COOP", 0)) if coop else (lambda v: 0)
        constraints += [
            Constraint("SPLIT > 0 only for a looped kernel", ("SPLIT", "persistent"),
                       lambda v: v["SPLIT"] == 0 or not v["persistent"]),
            Constraint(f"SPLIT x RBLOCK <= R={R}: every program reduces at least one chunk (COOP: its own rule)",
                       ("SPLIT", "RBLOCK") + (("COOP",) if coop else ()),
                       lambda v: coop_of(v) or v["SPLIT"] * v["RBLOCK"] <= R),
            Constraint(f"split programs (of a wave, where WAVE > 0) <= 8 x {target.compute_units} CUs (COOP: its "
                       f"own rule)", ("SPLIT", "XBLOCK") + (("WAVE",) if waves else ()) + (("COOP",) if coop else ()),
                       lambda v: v["SPLIT"] == 0 or coop_of(v)
                       or (wave(v) or math.ceil(X / v["XBLOCK"])) * v["SPLIT"] <= 8 * target.compute_units),
            Constraint("SPLIT > 0: the partials kernel's accumulators fit the registers a thread can have",
                       ("SPLIT", "XBLOCK", "RBLOCK", "num_warps") + (("waves_per_eu",) if target.is_amd else ()),
                       lambda v: v["SPLIT"] == 0 or split_registers(v, target) <= register_cap(v, target)),
        ]
    sizes = (("R", R), ("X", X)) + ((("strided", 1),) if strided else ())
    return Space("reduction", tuple(knobs), tuple(constraints), target.name, sizes, dtype_key(dtype))


STRIDED_XBLOCK_MAX = 1024   # a strided reduction's rows a program: 16 warps of 64 lanes, one row each
STRIDED_RBLOCK_MIN = 4
SHORT_ROWS_TILE = 1024      # elements a program of short contiguous rows holds: 1024 // R rows


def short_rows_top(r_top: int) -> int:
    """The most contiguous rows of r_top (R rounded up to a power of two) a program may take: 64, or as many as fill
    SHORT_ROWS_TILE where rows are shorter than 16 (at most STRIDED_XBLOCK_MAX). Measured on the H100 (2026-12-05,
    benchmarks/data/h100_2026-12-05d: sum over 16,777,216 rows of 2, fp32): 64 rows a program 162.8 us (2.49x the
    floor), 256 rows on 8 warps 80.0 us (1.22x); rows of 16 and 64 reach 1.23-1.26x at 1,024 elements a program."""
    return max(64, min(STRIDED_XBLOCK_MAX, SHORT_ROWS_TILE // max(1, r_top)))


def strided_seeds(target: Target, *, R: int, X: int, dtype: str = "fp32") -> list[dict]:
    """A strided reduction's (rows contiguous, the reduced axis strided) seeds, the tiles measured best somewhere on
    the H200 (benchmarks/strided_probe.py, 2026-12-04e call 3, (128, 4096, 4095) over the middle axis, µs): 64 rows
    x 64 on 8 warps (codegen's default: best for max and sum in both dtypes, bf16 max 1178 vs torch.compile's
    1313), then every warp across the rows with few elements a thread (the warp size x 8 rows x 8: bf16 argmin 1357
    vs 1542 at the default, eager 2432) and more on 4 warps (x 4 rows x 32: bf16 argmin 1380; fp32 argmin 2109 vs
    2101). A 16-element tile on 8 warps, predicted best from its registers and instructions, lost everywhere (bf16
    argmin 2033). Persistent where RBLOCK covers R; the measured search picks among them. Few row blocks of long
    rows (row_splits, strided) split: BatchNorm's statistics over a channels-last buffer (level-2 77: 128 channels,
    two blocks of 64) would otherwise run two programs."""
    r_top = next_power_of_two(R)
    x_top = max(1, next_power_of_two(X))
    tiles = ((64, 64, 8), (target.warp_size * 8, 8, 8), (target.warp_size * 4, 32, 4))
    splits = row_splits(target, R=R, X=X, dtype=dtype, strided=1)
    seeds = []
    for xblock, rblock, warps in tiles:
        rb = min(rblock, r_top)
        xb = min(xblock, STRIDED_XBLOCK_MAX, x_top)
        seed = {"XBLOCK": xb, "RBLOCK": rb, "persistent": rb >= r_top, "num_warps": warps, "num_stages": 1}
        if splits:   # few row blocks of long rows: split so that about two programs a CU run (reduction_seeds')
            want = next_power_of_two(math.ceil(2 * target.compute_units / math.ceil(X / xb)))
            split = max([s for s in splits if s <= want and s * rb <= R], default=0)
            seed.update(SPLIT=split, persistent=False if split else seed["persistent"])
        if seed not in seeds:
            seeds.append(seed)
    return seeds


COOP_VENDORS = ("nvidia", "amd")


def cooperative_target(target: Target) -> bool:
    """Whether `target` is a GPU whose programs run concurrently (NVIDIA, AMD): a cooperative split's programs wait
    on each other, which only a GPU that keeps them resident together honours."""
    return target.vendor in COOP_VENDORS


COOP_TILES = (1024, 2048, 4096, 8192, 16384)   # a cooperative program's tile (RBLOCK): its whole chunk


def cooperative_splits(target: Target, *, R: int) -> tuple[int, ...]:
    """The SPLIT values of a cooperative split of rows of R: ceil(R / RBLOCK) for each tile of COOP_TILES, so that
    no program of a row is empty (not a power of two: 23_Softmax's 393,216 in 4096-element tiles is 96, where the
    power of two 128 left 32 programs a row holding nothing but a wait), from 2 to the target's CUs."""
    return tuple(sorted({s for s in (math.ceil(R / t) for t in COOP_TILES) if 2 <= s <= target.compute_units}))


def cooperative_constraints(target: Target, *, R: int, waves: bool, splits: tuple[int, ...] = ()) -> list[Constraint]:
    """Where COOP = 1 is offered: a split (SPLIT > 0), not windowed, whose chunk is one RBLOCK tile with no program
    past the row's end (SPLIT = ceil(R / RBLOCK)), SPLIT <= the target's CUs, and a tile that fits the registers with
    the partials' accumulators and the kept tile (coop_registers <= register_cap). A SPLIT that is not a power of
    two (cooperative_splits) is for COOP = 1 only: `splits`, the other splits' values, are powers of two.

    Why SPLIT <= CUs cannot hang (benchmarks/longrow_probe.py's P4): programs take their row from an atomic ticket
    drawn when they start, so every row but the one of the highest ticket drawn so far has all its SPLIT programs
    started, and they publish their partials before waiting: those rows finish. Only that last row can wait on
    peers not yet started, and it holds at most SPLIT - 1 slots; with registers within register_cap (no LDS) a CU
    holds at least one program, so SPLIT <= CUs leaves a slot for the next ticket whatever the dispatch order, as
    long as no other kernel holds every CU (this kernel runs alone on its stream, as kerntailor launches it).
    Under Triton's interpreter one program runs to its end before the next starts: it deadlocks for SPLIT > 1,
    hence on_gpu only (reduction_space)."""
    cus = target.compute_units
    constraints = [
        Constraint("COOP = 1 only with SPLIT > 0" + (" and WAVE = 0" if waves else ""),
                   ("SPLIT", "COOP") + (("WAVE",) if waves else ()),
                   lambda v: not v["COOP"] or (v["SPLIT"] > 0 and not v.get("WAVE", 0))),
        Constraint(f"COOP = 1: one RBLOCK tile per program, none empty: SPLIT = ceil(R={R} / RBLOCK)",
                   ("SPLIT", "RBLOCK", "COOP"),
                   lambda v: not v["COOP"] or v["SPLIT"] == math.ceil(R / v["RBLOCK"])),
        Constraint("SPLIT of a cooperative tile (not a power of two, not a split of the space) only with COOP = 1",
                   ("SPLIT", "COOP"), lambda v: v["COOP"] or v["SPLIT"] in (0,) + tuple(splits)),
        Constraint(f"COOP = 1: SPLIT <= {cus} CUs (a row's programs resident together)", ("SPLIT", "COOP"),
                   lambda v: not v["COOP"] or v["SPLIT"] <= cus),
        Constraint("COOP = 1: the accumulators, the loaded tile and the kept one fit the registers",
                   ("SPLIT", "XBLOCK", "RBLOCK", "num_warps", "COOP") + (("waves_per_eu",) if target.is_amd else ()),
                   lambda v: not v["COOP"] or coop_registers(v, target) <= register_cap(v, target)),
    ]
    return constraints


REUSED_DTYPES = ("bf16", "fp16")   # REUSE's default is 1 for these rows, 0 for others (codegen/fused/reuse.py's)
COOP_MAXNREG = (0, 40, 32)         # NVIDIA register caps a cooperative split is timed at (0: none; see below)


def default_reuse(dtype: str) -> int:
    """REUSE's default for rows of `dtype`, as codegen's reuse_by_default decides it where a schedule leaves it
    unset: 1 (keep phase A's exponentials) for 16-bit floats, 0 (recompute the exp) otherwise."""
    return int(dtype_key(dtype) in REUSED_DTYPES)


def cooperative_knobs(target: Target, dtype: str) -> list[Knob]:
    """The cooperative split's own knobs. REUSE (codegen/fused/reuse.py), the dtype's default first (Space.config_of
    then gives a schedule that leaves it unset the kernel codegen writes for it): 1 keeps softmax's phase-A
    exponentials for phase B, 0 recomputes the exp per element. maxnreg (NVIDIA only: a CUDA compile option, ptx
    .maxnreg; AMD bounds a kernel's VGPRs through waves_per_eu, already a knob there): a cap on a thread's
    registers, which lets more programs share an SM. Measured on the H200 (softmax over 4096 x 393,216, 8 warps,
    2026-12-03g): fp32 reuse 4210 us at 48 registers, 3935 capped at 40, 4413 at 32 (8 B spilled), recompute 3986
    (40); bf16 reuse 3067 (40), 2995 capped at 32 (6 B spilled), recompute 3449 (48). Neither wins everywhere:
    the search times them."""
    knobs = [Knob("REUSE", (default_reuse(dtype), 1 - default_reuse(dtype)))]
    if target.backend == "cuda":
        knobs.append(Knob("maxnreg", COOP_MAXNREG))
    return knobs


def cooperative_knob_constraints(target: Target, dtype: str) -> list[Constraint]:
    """cooperative_knobs' values away from their defaults only with COOP = 1 (no other kernel reads them: one
    candidate, not two or six, for each schedule of another kernel)."""
    reuse = default_reuse(dtype)
    constraints = [Constraint(f"REUSE = {reuse} (the {dtype_key(dtype)} default) unless COOP = 1", ("REUSE", "COOP"),
                              lambda v: v["COOP"] or v["REUSE"] == reuse)]
    if target.backend == "cuda":
        constraints.append(Constraint("maxnreg = 0 (no cap) unless COOP = 1", ("maxnreg", "COOP"),
                                      lambda v: v["COOP"] or not v["maxnreg"]))
    return constraints


def coop_registers(values: Mapping[str, Any], target: Target) -> int:
    """split_registers and one more tile: the cooperative program keeps its first tile across the wait."""
    return split_registers(values, target) + math.ceil(values["XBLOCK"] * values["RBLOCK"] / _threads(values, target))


SPLIT_TILES_LIVE = 4   # tile-sized values a split program holds per thread: a Welford's two accumulators, the
                       # loaded tile and its index arithmetic (an estimate, bounded by the cross-compiles below)


def split_registers(values: Mapping[str, Any], target: Target) -> int:
    """32-bit registers a split-row partials kernel needs per thread, predicted: 16 + SPLIT_TILES_LIVE x the tile's
    values per thread [U]. Cross-compiled for 33_BatchNorm (triton 3.6.0, CPU, 2026-12-03) it bounds what the
    compilers used: 64 values per thread (predicted 272) took 206 to 221 registers on sm_90 and 234 VGPRs on
    gfx942, and 256 VGPRs with 4 spilled at waves_per_eu 2 (cap 256); 16 values (predicted 80) 57 registers;
    64 x 512 on 16 warps (64 values, over the 128 registers 512 threads can have) spilled 968 B on sm_90, and
    64 x 1024 on 16 waves of 64 323 VGPRs on gfx942 (cap 128): those the space leaves out."""
    per_thread = values["XBLOCK"] * values["RBLOCK"] / _threads(values, target)
    return 16 + SPLIT_TILES_LIVE * math.ceil(per_thread)


LOOPED_TILES_LIVE = 3   # tile-sized values a looped reduction holds per thread across its loop: a Welford's two
                        # accumulators (mean, M2; an online softmax's max and sum) and the loaded tile


def looped_registers(values: Mapping[str, Any], target: Target) -> int:
    """32-bit registers a looped reduction needs per thread, predicted: 16 + LOOPED_TILES_LIVE x the tile's values
    per thread [U]. Cross-compiled for GroupNorm's looped Welford kernel (KernelBench 35_GroupNorm_: 896 rows of
    2.1M; triton 3.6.0, CPU, 2026-12-03), it tells every spill: 64 values per thread (predicted 208) spilled on
    sm_90 at 32 warps (64 registers: 3.2 KB) and 16 warps (128: 9.8 KB) and on gfx942 at 16 waves (128 VGPRs: 336
    B); 32 values (112) spilled at 32 warps on sm_90 (744 B) and fit 16 warps (124 registers; 126 VGPRs); 64
    values on 8 warps (cap 255) took 247 registers, no spills. The H200 measured the spilling RBLOCK 65536 on 32
    warps at 13.1 ms against torch.compile's 5.4 ms (issue #18)."""
    per_thread = values["XBLOCK"] * values["RBLOCK"] / _threads(values, target)
    return 16 + LOOPED_TILES_LIVE * math.ceil(per_thread)


def register_cap(values: Mapping[str, Any], target: Target) -> int:
    """The registers one thread of a program of `values["num_warps"]` warps can have with the program resident:
    NVIDIA, the SM's file over the program's threads (255 at most); AMD, a SIMD's VGPRs over the waves the program
    puts on each of its SIMDs (and over waves_per_eu where set)."""
    warps = values["num_warps"]
    if target.is_amd:
        waves = max(math.ceil(warps / target.simds_per_cu), values.get("waves_per_eu") or 1)
        return min(target.max_registers_per_thread, target.registers_per_simd // waves)
    return min(target.max_registers_per_thread, target.registers_per_simd // _threads(values, target))


STRIDED_SPLIT_XBLOCK = 64    # a strided split's row block (codegen's strided default): its SPLIT values count these
STRIDED_SPLIT_CHUNK = 512    # and its chunks are at least this long (8 RBLOCK tiles of 64)


def row_splits(target: Target, *, R: int, X: int, dtype: str = "fp32", strided: int = 0) -> tuple[int, ...]:
    """The SPLIT values of a group of X rows of R (module docstring of reduction_space): () where rows are short,
    or many and a looped kernel's second pass still finds them in the cache (many_long_rows); for few rows, powers
    of two from 2 up to what puts about 4 programs per CU (at most 1024); for many, up to 1024 (windowed only).
    Strided (`strided` 1: the rows contiguous, so a program takes a block of STRIDED_SPLIT_XBLOCK of them) counts
    row blocks, not rows, with chunks of STRIDED_SPLIT_CHUNK elements at least: BatchNorm's statistics over 128
    channels kept channels-last (level-2 77) are 2 row blocks, which SPLIT up to 16 (4 x 304 CUs / 128 rows) left
    at 32 programs."""
    if R < SPLIT_ROWS_MIN_R or X < 1:
        return ()
    blocks = math.ceil(X / STRIDED_SPLIT_XBLOCK) if strided else X
    chunk = STRIDED_SPLIT_CHUNK if strided else 2048
    if blocks < 2 * target.compute_units:
        top = min(1024, next_power_of_two(math.ceil(4 * target.compute_units / blocks)), next_power_of_two(R) // chunk)
    elif many_long_rows(target, R=R, dtype=dtype) and row_waves(target, R=R, X=X, dtype=dtype):
        top = min(1024, next_power_of_two(R) // 2048)
    else:
        return ()
    return power_of_two_range(2, top) if top >= 2 else ()


LOOPED_ROWS_PER_CU = 4   # rows a looped one-program-per-row reduction has in flight per CU, for the space [U]
WAVE_MAX = 64


def many_long_rows(target: Target, *, R: int, dtype: str = "fp32") -> bool:
    """Whether the rows a looped reduction has in flight (LOOPED_ROWS_PER_CU per CU) outgrow the cache its second
    pass would re-read them from (Target.reuse_cache_bytes): that pass then reads HBM again (39_L2Norm_, 32,768
    rows of 65,535 fp32: 2.17x its floor on the H200), which a windowed split (WAVE > 0) avoids."""
    return LOOPED_ROWS_PER_CU * target.compute_units * R * itemsize(dtype) > target.reuse_cache_bytes


def window_bytes(wave: int, xblock: int, R: int, dtype: str) -> int:
    """Bytes a windowed split reads between a row's two reads: about two waves of WAVE x XBLOCK rows."""
    return 2 * wave * xblock * R * itemsize(dtype)


def row_waves(target: Target, *, R: int, X: int, dtype: str = "fp32") -> tuple[int, ...]:
    """WAVE values (powers of two up to WAVE_MAX and the rows) whose window of one-row blocks fits half the cache
    (the other half for what else runs, the partials and the outputs' write-back)."""
    top = min(WAVE_MAX, next_power_of_two(X))
    return tuple(w for w in power_of_two_range(1, top)
                 if window_bytes(w, 1, R, dtype) <= target.reuse_cache_bytes // 2)


def _wave_constraints(target: Target, *, R: int, X: int, dtype: str, names: tuple[str, ...] = ()) -> list[Constraint]:
    many = X >= 2 * target.compute_units
    half = target.reuse_cache_bytes // 2
    cus = target.compute_units
    return [
        Constraint("WAVE > 0 only with SPLIT > 0", ("SPLIT", "WAVE"), lambda v: v["WAVE"] == 0 or v["SPLIT"] > 0),
        Constraint("many rows: SPLIT > 0 only windowed (WAVE > 0) or cooperative (COOP = 1)",
                   ("SPLIT", "WAVE") + (("COOP",) if "COOP" in names else ()),
                   lambda v: not many or v["SPLIT"] == 0 or v["WAVE"] > 0 or v.get("COOP", 0)),
        Constraint(f"2 x WAVE x XBLOCK rows of R={R} fit half the cache ({half} B)", ("WAVE", "XBLOCK"),
                   lambda v: v["WAVE"] == 0 or window_bytes(v["WAVE"], v["XBLOCK"], R, dtype) <= half),
        Constraint(f"a wave's WAVE x SPLIT programs fill the {cus} CUs (or one wave holds every row)",
                   ("WAVE", "SPLIT", "XBLOCK"),
                   lambda v: v["WAVE"] == 0 or v["WAVE"] * v["SPLIT"] >= cus
                   or math.ceil(X / v["XBLOCK"]) <= v["WAVE"]),
    ]


def reduction_seeds(target: Target, *, R: int, X: int, dtype: str = "fp32", on_gpu: bool = False,
                    strided: int = 0) -> list[dict]:
    """Few long rows: a split-row schedule that gives about two programs per CU, 2048-element chunks, 8 warps (a
    heuristic seed, not measured; the cost model and the GPU decide). Many long rows: the windowed split of the
    largest WAVE whose window fits (row_waves), SPLIT so that a wave has about two programs per CU, and the looped
    row beside it. on_gpu (reduction_space): the cooperative split of cooperative_seed first. A strided reduction
    (`strided` 1) has strided_seeds first."""
    if strided:
        return strided_seeds(target, R=R, X=X, dtype=dtype) + reduction_seeds(target, R=R, X=X, dtype=dtype,
                                                                               on_gpu=on_gpu)
    splits = row_splits(target, R=R, X=X, dtype=dtype)
    if not splits:
        return []
    if on_gpu and cooperative_target(target):
        coop = cooperative_seed(target, R=R, dtype=dtype)
        return ([coop] if coop else []) + reduction_seeds(target, R=R, X=X, dtype=dtype)
    if X >= 2 * target.compute_units:
        wave = max(row_waves(target, R=R, X=X, dtype=dtype))
        want = next_power_of_two(math.ceil(2 * target.compute_units / wave))
        split = max(s for s in splits if s <= max(want, splits[0]))
        return [{"XBLOCK": 1, "RBLOCK": 2048, "SPLIT": split, "WAVE": wave, "persistent": False, "num_warps": 8,
                 "num_stages": 1},
                # and the looped row, one program per row: on the H200 it beat the windowed split on softmax over
                # 4096 rows of 393,216 in bf16 (2455 vs 2564 us) and on GroupNorm's 2M-element rows (5579 vs 6893
                # us fp32), and lost on L2Norm's 65,535 (6168 vs 3906 us bf16): the GPU decides
                {"XBLOCK": 1, "RBLOCK": 4096, "SPLIT": 0, "WAVE": 0, "persistent": False, "num_warps": 8,
                 "num_stages": 1}]
    want = next_power_of_two(math.ceil(2 * target.compute_units / X))
    split = max(s for s in splits if s <= max(want, splits[0]))
    return [{"XBLOCK": 1, "RBLOCK": 2048, "SPLIT": split, "persistent": False, "num_warps": 8, "num_stages": 1}]


COOP_RBLOCKS = (4096, 8192, 16384)   # a cooperative program's tile: 4096 on 8 warps ran best in the H200 probe


def cooperative_seed(target: Target, *, R: int, dtype: str = "fp32") -> dict | None:
    """The cooperative split (COOP = 1) of the smallest tile of COOP_RBLOCKS whose SPLIT = ceil(R / RBLOCK) (no
    empty program) is 2 to the CUs, on warps that give 16 elements a thread (the probe's: 8 warps for 4096, at
    most 16), REUSE the dtype's default (default_reuse). None where there is none. benchmarks/longrow_probe.py's
    P4 on the H200: 4096-element chunks (SPLIT 96 at 393,216), 8 warps, 1.24x the copy (fp32) and 1.62x (bf16,
    against torch.compile's 2.14x), where the windowed split ran 1.63x."""
    for rblock in COOP_RBLOCKS:
        split = math.ceil(R / rblock)
        if 2 <= split <= target.compute_units:
            warps = min(16, max(4, rblock // (16 * target.warp_size)))
            return {"XBLOCK": 1, "RBLOCK": rblock, "SPLIT": split, "WAVE": 0, "COOP": 1,
                    "REUSE": default_reuse(dtype), "persistent": False, "num_warps": warps, "num_stages": 1}
    return None


# --- gemm --------------------------------------------------------------------------------------------------

def gemv_tile(M: int, N: int) -> dict:
    """The GEMV path's vector side is one element wide, whatever its (unused) block knob says."""
    return {"BLOCK_N": 1} if N == 1 else {"BLOCK_M": 1} if M == 1 else {}


def gemm_lds_bytes(values: Mapping[str, Any], target: Target, dtype: str) -> int:
    """Estimated LDS per block of a Triton matmul tile (measured rule; module docstring)."""
    size = itemsize(dtype)
    a = values["BLOCK_M"] * values["BLOCK_K"] * size
    b = values["BLOCK_K"] * values["BLOCK_N"] * size * values.get("P", 1)   # P: a dual group's two B tiles
    stages = values.get("num_stages", 1)
    if target.is_amd:
        return max(a, b) if stages <= 1 else (stages - 1) * (a + b)
    return max(1, stages) * (a + b)


def gemm_space(target: Target, *, M: int, N: int, K: int, dtype: str = "fp16", P: int = 1, H: int = 1) -> Space:
    """C (M x N) = A (M x K) @ B (K x N) in BLOCK_M x BLOCK_N tiles stepping BLOCK_K, rows of tiles
    grouped by GROUP_M for L2 reuse, K split over split_k programs (partials summed after). P = 2: a dual group
    (plan/dual.py), two products of one A, two accumulators and two B tiles per program; its writer builds no
    split-K or TMA form (codegen/gemm), so the space offers none. H > 1: a horizontal group (plan/horizontal.py), H
    products of one A side by side (N: their sum), one accumulator a program; no split-K or TMA form either."""
    def tile_values(n: int, hi: int = 256, lo: int = 16) -> tuple[int, ...]:
        return power_of_two_range(lo, min(hi, max(lo, next_power_of_two(n))))

    # matrix x vector takes the GEMV path (multiply-adds, no tl.dot): rows down to 8, K chunks up to 1024
    gemv = 1 in (M, N)
    tiles_m = lambda v: math.ceil(M / v["BLOCK_M"])  # noqa: E731
    tiles_n = lambda v: math.ceil(N / v["BLOCK_N"])  # noqa: E731
    knobs = [
        Knob("BLOCK_M", tile_values(M, lo=8 if N == 1 else 16)),
        Knob("BLOCK_N", tile_values(N, lo=8 if M == 1 else 16)),
        Knob("BLOCK_K", tile_values(K, hi=1024 if gemv else 256)),
        Knob("GROUP_M", GROUP_M), Knob("num_warps", NUM_WARPS[:-1]), Knob("num_stages", (1, 2, 3, 4)),
        Knob("split_k", SPLIT_K if P == H == 1 else (1,)), *_amd_knobs(target, matrix=True),
        *(k if P == H == 1 or k.name != "TMA" else Knob("TMA", (0,)) for k in _tma_knobs(target)),
    ]

    def group_ok(v) -> bool:
        if v["GROUP_M"] == 1:
            return True
        smaller = max(g for g in GROUP_M if g < v["GROUP_M"])
        return tiles_n(v) > 1 and smaller < tiles_m(v)   # a group no larger than needed to cover every row

    constraints = _common_constraints(target) + [
        Constraint(f"accumulator <= {MAX_ACC_PER_THREAD} fp32 per thread", ("BLOCK_M", "BLOCK_N", "num_warps"),
                   lambda v: P * v["BLOCK_M"] * v["BLOCK_N"] <= MAX_ACC_PER_THREAD * _threads(v, target)),
        Constraint("accumulator >= one element per thread", ("BLOCK_M", "BLOCK_N", "num_warps"),
                   lambda v: v["BLOCK_M"] * v["BLOCK_N"] >= _threads(v, target)),
        Constraint("GROUP_M > 1 only on a 2-D tile grid, no larger than covers its rows",
                   ("BLOCK_M", "BLOCK_N", "GROUP_M"), group_ok),
        Constraint(f"LDS <= {target.lds_per_block} B per block", ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages"),
                   lambda v: gemm_lds_bytes(v | {"P": P} | gemv_tile(M, N), target, dtype) <= target.lds_per_block),
        # without a split one masked BLOCK_K step covers a K below the smallest tile (Mamba2's K = 3 products)
        Constraint("split_k leaves at least one BLOCK_K per split", ("BLOCK_K", "split_k"),
                   lambda v: v["split_k"] == 1 or K // v["split_k"] >= v["BLOCK_K"]),
        Constraint(f"split_k > 1 only when the M x N tiles cannot fill the {target.compute_units} CUs",
                   ("BLOCK_M", "BLOCK_N", "split_k"),
                   lambda v: v["split_k"] == 1 or tiles_m(v) * tiles_n(v) < target.compute_units),
    ]
    if dtype_key(dtype) == "fp8":  # tl.dot on 8-bit operands: K steps of 32; no GEMV path (codegen/gemm.py)
        constraints.append(Constraint("fp8: BLOCK_K >= 32, BLOCK_M and BLOCK_N >= 16",
                                      ("BLOCK_M", "BLOCK_N", "BLOCK_K"),
                                      lambda v: v["BLOCK_K"] >= 32 and min(v["BLOCK_M"], v["BLOCK_N"]) >= 16))
    if _tma_knobs(target):
        constraints.append(Constraint("TMA loads and persistent programs only without split_k",
                                      ("TMA", "PERSISTENT", "split_k"),
                                      lambda v: not (v["TMA"] or v["PERSISTENT"]) or v["split_k"] == 1))
    if target.is_amd:
        constraints.append(Constraint("matrix_instr_nonkdim <= min(BLOCK_M, BLOCK_N)",
                                      ("BLOCK_M", "BLOCK_N", "matrix_instr_nonkdim"),
                                      lambda v: v["matrix_instr_nonkdim"] <= min(v["BLOCK_M"], v["BLOCK_N"])))
    return Space("matmul", tuple(knobs), tuple(constraints), target.name,
                 (("M", M), ("N", N), ("K", K)) + ((("P", P),) if P > 1 else ()) + ((("H", H),) if H > 1 else ()),
                 dtype_key(dtype))


def gemm_seeds(target: Target, *, M: int, N: int, K: int, dtype: str = "fp16", P: int = 1, H: int = 1) -> list[dict]:
    """Schedules to time first on a GEMM of this shape, beside the portable heuristic (whichever of them
    the space allows; the search then tries its own). Where each comes from:

    - sm_90, 16-bit operands: 128x256x64 with 8 warps and 4 stages, and 256x128x64 with 8 warps and 3
      stages, were the fastest of ten fixed schedules on every large bf16 GEMM on the H200 (measured
      2026-11-30, benchmarks/data/gemm_h200_2026-11-30_bf16.json: 670-710 TFLOP/s on NN and TN, and the
      best on NT); the portable 128x128x32 heuristic ran 15-20 % slower. On the NT layout (x @ W.T) TMA
      loads ran 12 % faster than pointer tiles in the search, and persistent TMA programs faster still
      (benchmarks/gemm_nt_probe.py, 2026-12-01: 256x128x64/8w/3s 737 us and 128x128x64/4w/4s 765 us
      against 857 us for the best pointer kernel on gemm_bias_relu). With N <= 64 (tall-skinny,
      memory-bound): 128 x N x 64/4w/4s and 128 x N x 128/8w/4s were the fastest.
    - sm_90, matrix x vector (GEMV path), fp32 and bf16: 8 rows x 1024 of K and 16 x 512 (4 warps, 3 stages),
      128 x 128 (8 warps, 2 stages): the three fastest on matvec, within 2 % of the best in each dtype
      (gemm_h200_2026-11-30_*: bf16 118-121 us, fp32 222-226 us, floor 110 / 224 us).
    - sm_90, fp32 operands (for tf32x3, the policy that wins there; under ieee they are timed like any
      other): 128x128x64 with 8 warps, 3 stages, TMA and persistent programs ran gemm_bias_relu in 5051 us,
      128x128x32/8w/4s with TMA 6072 us, 128x128x32/8w/3s 6122 us, against 7549 us for the search's own
      pick (128x128x32/8w/2s) and 9599 us for cuBLAS sgemm (benchmarks/tf32x3_probe.py, 21 schedules,
      2026-12-01: benchmarks/data/tf32x3_probe_h200_2026-12-01.json).
    - sm_90, fp8 operands (the fp8 policies), 8 warps, TMA, persistent programs: 256x128x128/3s (492 us),
      128x128x256/3s (516 us), 128x256x128/3s (545 us) and 128x128x128/4s (569 us) were the four fastest of 12
      schedules on gemm_bias_relu bf16 under fp8-row, quantize kernels included, against 759 us for eager bf16
      in the same probe the run before (benchmarks/fp8_probe.py, 2026-12-01:
      benchmarks/data/fp8_probe_h200_2026-12-01_3b6d864.jsonl). The bigger tiles spill a little with the
      promoted accumulator and are still the fastest.
    - gfx942 / gfx90a / gfx950: ROCm's Triton tuning guidance (gpu-facts.md): num_stages 2 for a GEMM,
      matrix_instr_nonkdim 16, kpack 2 (1 where the compiler forces it), 128x128x64 with 4 warps
      (cross-compiled for gfx942: 32 v_mfma, no spills) and 256x128x64 with 8 warps. Not measured on
      AMD hardware: predicted mode ranks them with the analytical model like any other schedule.
    """
    sixteen = dtype in ("bf16", "fp16")
    seeds: list[dict] = []
    hopper = _hopper(target)
    if hopper and 1 in (M, N):  # matrix x vector: the GEMV path, rows x BLOCK_K multiply-adds per program
        rows, other = ("BLOCK_M", "BLOCK_N") if N == 1 else ("BLOCK_N", "BLOCK_M")
        gemv = {other: 16, "GROUP_M": 1, "split_k": 1, "TMA": 0, "PERSISTENT": 0}
        return [gemv | {rows: 8, "BLOCK_K": 1024, "num_warps": 4, "num_stages": 3},
                gemv | {rows: 16, "BLOCK_K": 512, "num_warps": 4, "num_stages": 3},
                gemv | {rows: 128, "BLOCK_K": 128, "num_warps": 8, "num_stages": 2}]
    if hopper and sixteen:
        plain = {"GROUP_M": 8, "split_k": 1, "TMA": 0, "PERSISTENT": 0}
        if N <= 64:
            n = max(16, next_power_of_two(N))
            skinny = plain | {"BLOCK_M": 128, "BLOCK_N": n, "GROUP_M": 1}
            seeds += [skinny | {"BLOCK_K": 64, "num_warps": 4, "num_stages": 4},
                      skinny | {"BLOCK_K": 128, "num_warps": 8, "num_stages": 4},
                      skinny | {"BLOCK_K": 128, "num_warps": 8, "num_stages": 4, "TMA": 1}]
        else:
            wide = plain | {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}
            seeds += [wide | {"TMA": 1, "PERSISTENT": 1},
                      plain | {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4,
                               "TMA": 1, "PERSISTENT": 1},
                      wide | {"TMA": 1}, wide,
                      plain | {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4}]
    elif hopper and dtype == "fp32" and N > 64:
        plain = {"BLOCK_M": 128, "BLOCK_N": 128, "GROUP_M": 8, "split_k": 1, "num_warps": 8}
        seeds += [plain | {"BLOCK_K": 64, "num_stages": 3, "TMA": 1, "PERSISTENT": 1},
                  plain | {"BLOCK_K": 32, "num_stages": 4, "TMA": 1, "PERSISTENT": 0},
                  plain | {"BLOCK_K": 32, "num_stages": 3, "TMA": 0, "PERSISTENT": 0}]
    elif hopper and dtype == "fp8" and min(M, N) > 64:
        plain = {"GROUP_M": 8, "split_k": 1, "num_warps": 8, "num_stages": 3, "TMA": 1, "PERSISTENT": 1}
        seeds += [plain | {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 128},
                  plain | {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 256},
                  plain | {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128},
                  plain | {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "num_stages": 4}]
    elif target.is_amd and sixteen:
        kpack = 1 if target.arch in KPACK_FORCED_1 else 2
        amd = {"BLOCK_K": 64, "GROUP_M": 8, "num_stages": 2, "split_k": 1, "waves_per_eu": 0,
               "matrix_instr_nonkdim": 16, "kpack": kpack}
        seeds += [{"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4} | amd,
                  {"BLOCK_M": 256, "BLOCK_N": 128, "num_warps": 8} | amd]
    return seeds


# --- attention ---------------------------------------------------------------------------------------------

def attention_lds_bytes(values: Mapping[str, Any], target: Target, dtype: str, D: int, Dv: int, MASK: int = 0,
                        KLOADS: int = 0) -> int:
    """Estimated LDS per block of a flash-attention kernel: the K and V tiles of one step (BLOCK_N x D and
    BLOCK_N x Dv, heads padded to a power of two) per stage, by gemm_lds_bytes's rule for the stages. Hopper adds
    what triton 3.6 puts beside them (sm_90 cross-compiles, bf16, D = 128): the Q tile wgmma reads (BLOCK_M x D),
    and a 2-D mask tile of MASK bytes an element (an additive bias; codegen/attention.py's work_sizes) in
    num_stages - 1 buffers: sdpa at 128 x 128, 3 stages, 229,376 B = 3 x 64 KiB + 32 KiB (the estimate exactly),
    with a bf16 bias 294,912 B (+ 2 x 32 KiB), over the 227 KiB a block may take. Elsewhere the Q tile stays in
    registers (gfx942: 32,768 B at 128 x 64, 1 stage: the K and V tiles alone). The build reads the real figure and
    rejects what does not fit.

    KLOADS (codegen/attention.py's key_loads; 0: k is loaded as it is): a k computed by a prologue on NVIDIA takes
    one buffer for the computed K tile tl.dot reads and num_stages - 1 for each of the KLOADS tiles its prologue
    loads on a step, in place of num_stages K buffers. Cross-compiled for sm_90 (rope_sdpa bf16 at T 2048, 16 heads
    of 128: KLOADS 5; triton 3.6, 2026-12-05) the estimate is the build's figure at 2-4 stages: 491,520 B at 128 x
    128 / 3 stages (11 + 3 tiles of 32 KiB + Q), 262,144 B at 128 x 64 / 3, 163,840 at 128 x 64 / 2, 98,304 to
    196,608 at 128 x 32 / 2-4; at 1 stage the build shares one buffer between K and V and takes a tile less (65,536
    B at 128 x 128, the estimate 98,304). gfx942 keeps the prologue's loads in registers: 32,768 B at 128 x 64 and
    128 x 32, 1 and 2 stages, as without a prologue, so KLOADS changes nothing there."""
    size = itemsize(dtype)
    k_tile = values["BLOCK_N"] * next_power_of_two(max(16, D)) * size
    v_tile = values["BLOCK_N"] * next_power_of_two(max(16, Dv)) * size
    stages = values.get("num_stages", 1)
    if target.is_amd:
        step = k_tile + v_tile
        return step if stages <= 1 else (stages - 1) * step
    k_buffers = 1 + (max(1, stages) - 1) * KLOADS if KLOADS else max(1, stages)
    total = k_buffers * k_tile + max(1, stages) * v_tile
    if _hopper(target):
        total += values["BLOCK_M"] * next_power_of_two(max(16, D)) * size
        total += max(0, stages - 1) * values["BLOCK_M"] * values["BLOCK_N"] * MASK
    return total


def attention_space(target: Target, *, BH: int, Lq: int, Lk: int, D: int, Dv: int, dtype: str = "fp16",
                    MASK: int = 0, KLOADS: int = 0, G: int = 0) -> Space:
    """Flash attention (codegen/attention.py): BLOCK_M query rows per program on a (cdiv(Lq, BLOCK_M), BH) grid,
    BLOCK_N keys per step. Knobs: BLOCK_M, BLOCK_N (16-128, no bigger than the sequence warrants), num_warps
    (2-8), num_stages (1-4; AMD 1-2: ROCm's guide keeps fused GEMMs at one or two); AMD: waves_per_eu and
    matrix_instr_nonkdim (16, 32); Hopper: TMA (0, 1). The fp32 accumulator (BLOCK_M x Dv) and the score tile
    (BLOCK_M x BLOCK_N) share the GEMM's budget of MAX_ACC_PER_THREAD fp32 values per thread. MASK: the bytes of
    an element of a 2-D mask tile (attention_lds_bytes), absent from the space's sizes where 0. KLOADS: the tiles
    k's prologue loads a key step (attention_lds_bytes), absent where 0 (k loaded as it is); where k is computed, TMA
    takes only 0 (codegen refuses a descriptor load of a computed k). G: the query heads per K/V head where codegen
    can pack them into a program's rows (codegen/attention.py's pack_group; absent where 0): the knob PACK (0, 1)
    where the queries are few (Lq <= MAX_PACK_QUERIES), its tiles sized by G x Lq rows."""
    def tiles(n: int) -> tuple[int, ...]:
        return power_of_two_range(16, min(128, max(16, next_power_of_two(n))))

    dv = next_power_of_two(max(16, Dv))
    pack = G > 1 and Lq <= MAX_PACK_QUERIES
    knobs = [Knob("BLOCK_M", tiles(Lq * G if pack else Lq)), Knob("BLOCK_N", tiles(Lk)), Knob("num_warps", (2, 4, 8)),
             Knob("num_stages", (1, 2) if target.is_amd else (1, 2, 3, 4))]
    if target.is_amd:
        knobs += [Knob("waves_per_eu", WAVES_PER_EU), Knob("matrix_instr_nonkdim", MATRIX_INSTR_NONKDIM)]
    if _hopper(target):   # K and V through tensor descriptors (codegen/attention.py), not a computed k
        knobs.append(Knob("TMA", (0,) if KLOADS else (0, 1)))
    splits = key_splits(target, BH=BH, Lq=Lq, Lk=Lk, G=G if pack else 0)
    if splits:
        knobs.append(Knob("SPLIT", (1,) + splits))
    if pack:
        knobs.append(Knob("PACK", (0, 1)))
    constraints = _common_constraints(target) + [
        Constraint(f"accumulator + scores <= {MAX_ACC_PER_THREAD} fp32 per thread",
                   ("BLOCK_M", "BLOCK_N", "num_warps"),
                   lambda v: v["BLOCK_M"] * (dv + v["BLOCK_N"]) <= MAX_ACC_PER_THREAD * _threads(v, target)),
        Constraint("scores >= one element per thread", ("BLOCK_M", "BLOCK_N", "num_warps"),
                   lambda v: v["BLOCK_M"] * v["BLOCK_N"] >= _threads(v, target)),
        Constraint(f"LDS <= {target.lds_per_block} B per block", ("BLOCK_N", "num_stages"),
                   lambda v: attention_lds_bytes(v, target, dtype, D, Dv, MASK, KLOADS) <= target.lds_per_block),
    ]
    if splits:
        constraints.append(Constraint(f"SPLIT x BLOCK_N <= Lk={Lk}: every key chunk at least one block",
                                      ("SPLIT", "BLOCK_N"),
                                      lambda v: v["SPLIT"] == 1 or v["SPLIT"] * v["BLOCK_N"] <= Lk))
    if target.is_amd:
        constraints.append(Constraint("matrix_instr_nonkdim <= min(BLOCK_M, BLOCK_N)",
                                      ("BLOCK_M", "BLOCK_N", "matrix_instr_nonkdim"),
                                      lambda v: v["matrix_instr_nonkdim"] <= min(v["BLOCK_M"], v["BLOCK_N"])))
    return Space("attention", tuple(knobs), tuple(constraints), target.name,
                 (("BH", BH), ("Lq", Lq), ("Lk", Lk), ("D", D), ("Dv", Dv)) + ((("MASK", MASK),) if MASK else ())
                 + ((("KLOADS", KLOADS),) if KLOADS else ()) + ((("G", G),) if pack else ()),
                 dtype_key(dtype))


MAX_KEY_SPLIT = 64   # key chunks of a split attention (codegen/attention_split.py): its partials grow with it
MAX_PACK_QUERIES = 64   # PACK (GQA heads in one program's rows) is offered up to this many queries: decode, a few


def key_splits(target: Target, *, BH: int, Lq: int, Lk: int, G: int = 0) -> tuple[int, ...]:
    """The SPLIT values (> 1) of an attention's keys (codegen/attention_split.py): powers of two up to
    MAX_KEY_SPLIT with at least 16 keys (the smallest BLOCK_N) a chunk, where the grid without a split, at its
    largest (16 query rows a program: cdiv(Lq, 16) x BH), is below the target's compute units; () elsewhere.

    Why the grid and not Lq alone: a split buys parallelism (SPLIT times the programs, each key chain SPLIT times
    shorter) and pays a second launch and the fp32 partials (Lq x (Dv + 2) per head and chunk). Where the grid
    already holds a program per CU, every CU streams keys and the split is that cost for nothing: a Llama decode
    step at batch 32 (32 query heads: 1024 programs) gets none, at batch 1-4 (32-128 programs, under the H200's
    132 SMs and MI300X's 304 CUs) the split fills the machine. G > 1 (PACK offered): the packed grid, G x Lq rows
    over BH / G heads, G times fewer programs, decides."""
    if _attention_grid(BH, Lq, 16, G) >= target.compute_units:
        return ()
    top = min(MAX_KEY_SPLIT, Lk // 16)
    return tuple(s for s in power_of_two_range(2, max(2, top)) if s <= top)


def decode_seeds(target: Target, *, BH: int, Lq: int, Lk: int, G: int = 0) -> list[dict]:
    """A split decode schedule (Lq <= 16, key_splits offered): 16 query rows, 64 keys a step, 4 warps, SPLIT the
    smallest power of two that gives every compute unit a program (at most the largest offered), and the same
    tile unsplit beside it, so that the search times both. G > 1 (GQA, PACK offered): first the same two with the
    query heads of a K/V head packed in the rows (G x Lq rows, the split chosen for that grid; unsplit alone where
    the packed grid needs none), then the two unpacked ones where a split is offered."""
    if Lq > 16 or Lk < 64:
        return []
    extra = {"num_stages": 1, "waves_per_eu": 2, "matrix_instr_nonkdim": 16} if target.is_amd else \
        {"num_stages": 2} | ({"TMA": 0} if _hopper(target) else {})
    pack = G > 1 and Lq <= MAX_PACK_QUERIES
    splits = key_splits(target, BH=BH, Lq=Lq, Lk=Lk, G=G if pack else 0)   # the space's SPLIT knob
    fits = [s for s in splits if s * 64 <= Lk]
    seeds = []
    for packed in ((1, 0) if pack else (0,)):
        programs = _attention_grid(BH, Lq, 16, G if packed else 0)
        split = next((s for s in fits if s * programs >= target.compute_units), fits[-1]) if fits else 0
        if programs >= target.compute_units:
            split = 0
        if not split and not packed:
            continue
        for s in (split, 1) if split else (1,):
            seeds.append({"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4} | extra | ({"SPLIT": s} if splits else {})
                         | ({"PACK": packed} if pack else {}))
    return seeds


def attention_seeds(target: Target, *, BH: int, Lq: int, Lk: int, D: int, Dv: int, dtype: str = "fp16",
                    MASK: int = 0, KLOADS: int = 0, G: int = 0) -> list[dict]:
    """Schedules to time first. Triton's fused-attention tutorial (python/tutorials/06-fused-attention.py,
    triton 3.x) tunes BLOCK_M in (64, 128), BLOCK_N in (32, 64, 128), num_stages in (2, 3, 4), num_warps in
    (4, 8), and on Hopper keeps 8 warps only for 128 x 128 tiles; its AMD variant (and ROCm's flash-attention
    Triton kernels) runs 1 stage with matrix_instr_nonkdim 16 and waves_per_eu 2, 128 x 64 (or 128 x 32) on 4
    warps. Measured on the H200 (bf16, D = 128, benchmarks/data/attention_h200_bf16_2026-12-02.json): 128 x 128,
    8 warps, 3 stages was the best of the seeds on sdpa, causal and GQA, 128 x 64 (8 warps) next, 64 x 64
    (4 warps, 4 stages) the slowest (0.7x of the best): it is no seed any more. 128 x 64 and 128 x 128 on 4
    NVIDIA warps leave this space at D = 128 (accumulator + scores > MAX_ACC_PER_THREAD). Long queries only
    (decode takes the heuristic). On Hopper each tile both with TMA (the tutorial's descriptor loads) and
    without: not measured yet; cross-compiled (triton 3.6, sdpa / causal / GQA bf16, D = 128, 128 x 128, 8 warps,
    3 stages) TMA took 222-234 registers and no spill, the pointer loads 255 and 8-16 bytes of spills (causal,
    GQA). On NVIDIA a seed over the LDS rule (attention_lds_bytes: a mask tile, k's prologue) takes fewer stages.

    With k computed by a prologue (KLOADS > 0: rotary embedding), Hopper's seeds are pointer loads only (codegen
    refuses TMA there) and 128 x 32 joins them: on the H200 (2026-12-05, rope_sdpa and llama_decoder_block bf16)
    128 x 32 / 8 warps / 2 stages was the one schedule of five that built; 128 x 128 and 128 x 64 at 3 stages took
    480 and 256 KiB. Fitted: 128 x 128 at 1 stage, 128 x 64 at 2, 128 x 32 at 3 and 2. Cross-compiled at T 2048,
    16 heads of 128 (tests/test_attention_prologue.py, which lists the figures): all within the target's LDS; on
    sm_90 128 x 128 / 1 stage took 255 registers and 104 B of spills, the others none; on gfx942 128 x 64 spilled
    49 (not measured on a GPU yet).

    Decode (Lq <= 16 on a grid below the target's compute units): decode_seeds, a split and the same tile unsplit."""
    if Lq <= 16:
        return decode_seeds(target, BH=BH, Lq=Lq, Lk=Lk, G=G)
    if Lq < 128 or Lk < 128:
        return []
    if dtype_key(dtype) == "fp32":
        # Measured on the H200 (fp32 ieee, sdpa and causal, D = 64, benchmarks/data/h200_2026-12-03e/
        # attention_fp32_small_tiles.json): Triton's fp32 ieee dot is an FMA loop there, and small query tiles
        # run fastest: 16 x 64 / 4 warps 48.0 ms (sdpa), 32 x 32 / 4 warps 55.9, 64 x 32 (the old default) 103.9;
        # tf32x3 (last session) ran best at 64 x 64 / 4 warps. Eager's efficient attention: 11.8 ms.
        if target.is_amd:
            return []
        tma = {"TMA": 0} if _hopper(target) else {}   # measured without TMA
        seeds = [{"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2} | tma,
                 {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2} | tma,
                 {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2} | tma]
    elif dtype_key(dtype) not in ("bf16", "fp16"):
        return []
    elif target.is_amd:
        amd = {"num_stages": 1, "waves_per_eu": 2, "matrix_instr_nonkdim": 16}
        return [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4} | amd,
                {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 4} | amd]
    elif not _hopper(target):
        return []
    elif KLOADS:
        seeds = [{"BLOCK_M": 128, "BLOCK_N": n, "num_warps": 8, "num_stages": 3, "TMA": 0} for n in (128, 64, 32)]
        seeds.append({"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2, "TMA": 0})
    else:
        seeds = [{"BLOCK_M": 128, "BLOCK_N": n, "num_warps": 8, "num_stages": 3, "TMA": tma}
                 for n in (128, 64) for tma in (1, 0)]
    for seed in seeds:
        while seed["num_stages"] > 1 and \
                attention_lds_bytes(seed, target, dtype, D, Dv, MASK, KLOADS) > target.lds_per_block:
            seed["num_stages"] -= 1
    return seeds


def conv_space(target: Target, *, M: int, N: int, K: int, dtype: str = "fp16", pointwise: int = 0,
               phases: int = 0, Kg: int = 0, Ku: int = 0, whole_row: int = 0, taps: int = 0,
               C: int = 0, outer: int = 0, L: int = 0) -> Space:
    """A convolution as an implicit GEMM (codegen/conv.py): M output positions (groups folded in) x N output
    channels of a group, K = input channels of a group x kernel positions; BLOCK_M x BLOCK_N tiles stepping
    BLOCK_K, compiled with num_warps and num_stages (+ AMD's waves_per_eu, matrix_instr_nonkdim, kpack). Tiles
    from tl.dot's 16 up to 256 (BLOCK_K up to 128: each step's patch is gathered through masks, not streamed);
    the accumulator and LDS rules are gemm's. A convolution the pointwise form takes (`pointwise` 1: codegen's
    conv.work_sizes) has the knob pointwise: that form first, then the implicit GEMM (the tiles mean the same in
    both: BLOCK_M positions, BLOCK_N channels, BLOCK_K input channels). A transposed convolution (`phases` 1 or 2:
    codegen's conv.work_sizes) has the knob phases (codegen/conv_phases.py: split by output phase, rows along the
    last axis), first where it is the default (2: a stride > 1), else second; Kg and Ku (the gather form's K and
    the useful products per output) only price the forms (_conv_padding), the tiles range over K. A forward
    convolution with a kernel of more than one position (`taps` 1 or 2, C its input channels per group: codegen's
    conv.work_sizes) has the knobs taps (K in (kernel position, input channel) order, codegen/conv.py) and stage
    (that order over channels-last copies of the input and the weight: only with taps), each first where it is
    the default (2: C >= 32), else second; in the tap order a BLOCK_K step spans one tap's channels, so BLOCK_K is
    at most C rounded up to a power of two (at least 16). `whole_row` 1 (a row tail that writes softmax's output
    over the channels: codegen's conv.work_sizes): BLOCK_N spans N. `outer` 1 or 2 (a transposed convolution at
    stride 1 with several taps, C its input channels per group) adds the knobs taps_outer (codegen/conv.py: K steps
    over one tap's channels each; gather form only, so not with phases) and stage (taps outer over a channels-last
    copy of the input: only with taps_outer), each first where it is the default (2). `L` (the phase form's line: the
    o' along the last axis, codegen's conv.work_sizes): the phase form's BLOCK_M is at most L's power of two (its
    rows never span two lines, conv_phases.py: a 128-row tile on a 32-row line leaves 3/4 of its products idle)."""
    def tile_values(n: int, hi: int) -> tuple[int, ...]:
        return power_of_two_range(16, min(hi, max(16, next_power_of_two(n))))

    knobs = [Knob("BLOCK_M", tile_values(M, 256)), Knob("BLOCK_N", tile_values(N, 256)),
             Knob("BLOCK_K", tile_values(K, 128)), Knob("num_warps", NUM_WARPS[:-2]),
             Knob("num_stages", (1, 2, 3, 4)), *_amd_knobs(target, matrix=True)]
    if pointwise:
        knobs.append(Knob("pointwise", (True, False)))
    if phases:
        knobs.append(Knob("phases", (True, False) if phases == 2 else (False, True)))
    if taps:
        knobs += [Knob("taps", (True, False) if taps == 2 else (False, True)),
                  Knob("stage", (True, False) if taps == 2 else (False, True))]
    if outer:
        knobs += [Knob("taps_outer", (True, False) if outer == 2 else (False, True)),
                  Knob("stage", (True, False) if outer == 2 else (False, True))]
    constraints = _common_constraints(target) + [
        Constraint(f"accumulator <= {MAX_ACC_PER_THREAD} fp32 per thread", ("BLOCK_M", "BLOCK_N", "num_warps"),
                   lambda v: v["BLOCK_M"] * v["BLOCK_N"] <= MAX_ACC_PER_THREAD * _threads(v, target)),
        Constraint("accumulator >= one element per thread", ("BLOCK_M", "BLOCK_N", "num_warps"),
                   lambda v: v["BLOCK_M"] * v["BLOCK_N"] >= _threads(v, target)),
        Constraint(f"LDS <= {target.lds_per_block} B per block", ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages"),
                   lambda v: gemm_lds_bytes(v, target, dtype) <= target.lds_per_block),
    ]
    if target.is_amd:
        constraints.append(Constraint("matrix_instr_nonkdim <= min(BLOCK_M, BLOCK_N)",
                                      ("BLOCK_M", "BLOCK_N", "matrix_instr_nonkdim"),
                                      lambda v: v["matrix_instr_nonkdim"] <= min(v["BLOCK_M"], v["BLOCK_N"])))
    if whole_row:
        constraints.append(Constraint(f"BLOCK_N >= {N}: one tile over every channel (a whole-row tail)",
                                      ("BLOCK_N",), lambda v: v["BLOCK_N"] >= N))
    sizes = (("M", M), ("N", N), ("K", K)) + ((("pointwise", 1),) if pointwise else ())
    sizes += (("phases", phases),) if phases else ()
    sizes += (("Kg", Kg), ("Ku", Ku)) if Kg else ()
    if phases and L:
        line = phase_rows(L)
        constraints.append(Constraint(f"phases: BLOCK_M <= {line} (the rows of a line)", ("BLOCK_M", "phases"),
                                      lambda v: not v["phases"] or v["BLOCK_M"] <= line))
        sizes += (("L", L),)
    sizes += (("whole_row", 1),) if whole_row else ()
    if taps:
        span = max(16, next_power_of_two(C))
        constraints += [Constraint(f"taps: BLOCK_K <= {span} (a tap's input channels)", ("BLOCK_K", "taps"),
                                   lambda v: not v["taps"] or v["BLOCK_K"] <= span),
                        Constraint("stage only with taps", ("taps", "stage"), lambda v: v["taps"] or not v["stage"])]
        sizes += (("taps", taps), ("C", C))
    if outer:
        span_o = max(16, next_power_of_two(C))
        constraints.append(Constraint(f"taps_outer: BLOCK_K <= {span_o} (a tap's input channels)", ("BLOCK_K",
                           "taps_outer"), lambda v: not v["taps_outer"] or v["BLOCK_K"] <= span_o))
        if phases:   # a transposed conv with a column tail has no phase form (codegen's conv.work_sizes)
            constraints.append(Constraint("taps_outer only in the gather form", ("taps_outer", "phases"),
                                          lambda v: not v["taps_outer"] or not v["phases"]))
        constraints.append(Constraint("stage only with taps_outer", ("taps_outer", "stage"),
                                      lambda v: v["taps_outer"] or not v["stage"]))
        sizes += (("outer", outer), ("C", C))
    return Space("conv", tuple(knobs), tuple(constraints), target.name, sizes, dtype_key(dtype))


def conv_seeds(target: Target, *, M: int, N: int, K: int, dtype: str = "fp16", pointwise: int = 0,
               phases: int = 0, Kg: int = 0, Ku: int = 0, whole_row: int = 0, taps: int = 0,
               C: int = 0, outer: int = 0, L: int = 0) -> list[dict]:
    """Schedules to time first on a convolution, beside the portable heuristic: gemm's measured Hopper tiles
    (gemm_seeds: 128x128x64 / 4 warps / 4 stages and 128x256x64 / 8 / 4 for 16-bit operands, 128x128x32 / 8 / 3
    for fp32) where N fills them, then for 16-bit operands half a tile (128x64x64 / 4 / 3: measured fastest on a
    3 x 3 conv of 64 -> 128 channels, H200), 128 x N for narrow N (64 and below, as gemm's tall-skinny seeds),
    and on AMD ROCm's guidance (gemm_seeds: 2 stages, matrix_instr_nonkdim 16). The others not measured on
    convolutions yet (benchmarks/conv_gen_probe.py); the space drops any it does not allow.

    `pointwise` 1 (a 1 x 1 convolution the pointwise form takes): that form first, on 128 and 256 positions x up to
    128 channels x the input channels up to 64 (32 for fp32) per step, so that a layer of <= 128 output channels
    reads its input once (KernelBench's 87_conv_pointwise_2D: 64 -> 128 channels over 1024 x 1024; predicted
    memory-bound), then the implicit GEMM's seeds as the alternative. Not measured yet.

    `phases` (a transposed convolution): the implicit GEMM's seeds in the default form (2: split by phase), then its
    first seed in the other.

    `taps` (a forward convolution's kernel of several positions): the implicit GEMM's seeds in the default order
    (2: the tap order over channels-last copies, BLOCK_K cut to C's power of two), its first seed second in the
    weight's order (the old form: a search of few candidates still times it) and third in the tap order without
    the copies, the staged rest after; where taps is 1 the weight's order first, then the tap order, then staged. A
    128 x 128 tile in the tap order takes 8 warps and 3 stages (cross-compiled for sm_90 at KernelBench 55's sizes,
    bf16, 128 x 128 x 64: 4 warps / 4 stages spill 1120 B with the copies, 712 B without; 8 / 3: none). Not
    measured yet."""
    if taps:
        implicit = conv_seeds(target, M=M, N=N, K=K, dtype=dtype)
        span = max(16, next_power_of_two(C))

        def cut(seed: dict, on: bool, stage: bool) -> dict:
            wide = on and seed["BLOCK_M"] * seed["BLOCK_N"] >= 128 * 128
            return seed | {"taps": on, "stage": stage} | ({"BLOCK_K": min(seed["BLOCK_K"], span)} if on else {}) | \
                ({"num_warps": 8, "num_stages": 3} if wide else {})
        staged = [cut(s, True, True) for s in implicit]
        plain, old = cut(implicit[0], True, False), cut(implicit[0], False, False)
        return staged[:1] + [old, plain] + staged[1:] if taps == 2 else [old, plain, staged[0]]
    if outer:   # stride 1, several taps: the gather form's seeds with the taps outer (first where the default)
        base = conv_seeds(target, M=M, N=N, K=K, dtype=dtype, phases=phases, L=L)
        span = max(16, next_power_of_two(C))
        on = [s | {"taps_outer": True, "BLOCK_K": min(s["BLOCK_K"], span)} for s in base if not s.get("phases")]
        off = [s | {"taps_outer": False, "stage": False} for s in base]
        # taps outer over NCHW's x too (stage off: the default before da58591), so a measured search times both
        nchw = [on[0] | {"stage": False}] if on else []
        return on[:1] + off[:1] + nchw + on[1:] + off[1:] if outer == 2 else off + on[:1] + nchw
    if phases:
        first = phases == 2
        implicit = conv_seeds(target, M=M, N=N, K=K, dtype=dtype)
        line = phase_rows(L) if L else 256

        def phased(seed: dict, on: bool) -> dict:   # the phase form's rows within a line (conv_space's rule)
            return seed | {"phases": on} | ({"BLOCK_M": min(seed["BLOCK_M"], line)} if on else {})
        return [phased(s, first) for s in implicit] + [phased(s, not first) for s in implicit[:1]]
    if pointwise:
        sixteen = dtype in ("bf16", "fp16")
        n = max(16, min(128, next_power_of_two(N)))
        k = max(16, min(64 if sixteen else 32, next_power_of_two(K)))
        if target.is_amd:
            amd = {"num_stages": 2, "matrix_instr_nonkdim": 16, "waves_per_eu": 0,
                   "kpack": 2 if target.arch not in KPACK_FORCED_1 else 1}
            forms = [amd | {"BLOCK_M": 128, "BLOCK_N": n, "BLOCK_K": k, "num_warps": 4}]
        else:
            forms = [{"BLOCK_M": 128, "BLOCK_N": n, "BLOCK_K": k, "num_warps": 4, "num_stages": 3},
                     {"BLOCK_M": 256, "BLOCK_N": n, "BLOCK_K": k, "num_warps": 8, "num_stages": 3}]
        implicit = conv_seeds(target, M=M, N=N, K=K, dtype=dtype)
        return [s | {"pointwise": True} for s in forms] + [s | {"pointwise": False} for s in implicit]
    sixteen = dtype in ("bf16", "fp16")
    n = max(16, min(128, next_power_of_two(N)))
    if target.is_amd:
        amd = {"num_stages": 2, "matrix_instr_nonkdim": 16, "kpack": 2 if target.arch not in KPACK_FORCED_1 else 1,
               "waves_per_eu": 0}
        return [amd | {"BLOCK_M": 128, "BLOCK_N": n, "BLOCK_K": 64 if sixteen else 32, "num_warps": 4}]
    if N <= 64:
        return [{"BLOCK_M": 128, "BLOCK_N": n, "BLOCK_K": 64 if sixteen else 32, "num_warps": 4, "num_stages": 4}]
    if sixteen:
        wide = [{"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4}] if N > 128 else []
        # half the tile, 4 warps, 3 stages: measured on the H200 the fastest of 17 schedules on KernelBench level-2
        # 31's 64 -> 128 3 x 3 conv at 128^2, batch 128 (tap order, bf16: 1021 us against 1203-1229 for the
        # 128 x 128 tiles; benchmarks/data/h200_2026-12-04c/call1/conv_gen_31.json)
        half = [{"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3}]
        return [{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4}] + wide + half
    return [{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}]


def library_space(target: Target, *, dtype: str = "fp32", layouts: int = 1, **sizes) -> Space:
    """A library group (codegen/library.py): the library picks its own algorithm, so there is nothing to tune:
    one Config with no knobs; a convolution whose output can stay channels-last (`layouts` 2: codegen's
    library.work_sizes) has the knob channels_last, NCHW first."""
    knobs = (Knob("channels_last", (False, True)),) if layouts > 1 else ()
    sizes = dict(sizes, **({"layouts": layouts} if layouts > 1 else {}))
    return Space("library", knobs, (), target.name, tuple(sorted(sizes.items())), dtype_key(dtype))


def scan_space(target: Target, *, R: int, X: int, dtype: str = "fp32") -> Space:
    """X rows scanned along R, XBLOCK rows per program, RBLOCK elements per chunk (a carry between
    chunks). Knobs: XBLOCK, RBLOCK, num_warps (+ waves_per_eu on AMD)."""
    r_top = next_power_of_two(R)
    knobs = [Knob("XBLOCK", power_of_two_range(1, min(max(1, next_power_of_two(X)), 64))),
             Knob("RBLOCK", power_of_two_range(min(256, r_top), min(4096, max(256, r_top)))),
             Knob("num_warps", NUM_WARPS), *_amd_knobs(target, matrix=False)]
    constraints = _common_constraints(target) + _tile_constraints(
        target, lambda v: v["XBLOCK"] * v["RBLOCK"], ("XBLOCK", "RBLOCK", "num_warps"), dtype)
    return Space("scan", tuple(knobs), tuple(constraints), target.name, (("R", R), ("X", X)), dtype_key(dtype))


POOL_ROWS = (1, 2, 4, 8)   # a pool's output rows per program (codegen/pool.py's PoolSchedule.ROWS)
SLIDE_LOAD_LIMIT = 128     # ROWS > 1: unrolled loads of one step of the outer window (input rows x last-axis window)
# vector instructions per window element of a pool (lane-ops): a masked load (its address, the mask's bounds, the
# load, the upcast) and a combine (max: two compares, an or, a select; a sum: one add). Counted by hand from the
# generated kernels, rough [U]; the 16-load window of KernelBench 42 (MaxPool2d 4x4 stride 1 on 32x64x512x512
# fp32) then predicts 3.1 ms on an H200 where 3.56 ms were measured, against a memory floor of 0.96 ms
POOL_LOAD_OPS = 8
POOL_COMBINE_OPS = 4


def sliding_rows(rows: int, kernel: int, stride: int, dilation: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The input rows `rows` consecutive output rows of a pool read along one axis, relative to the first one's
    window start, each with the output rows that read it: ((row, (output rows..)), ..), rows read by none left
    out (a stride beyond the window skips some)."""
    users: dict[int, list[int]] = {}
    for r in range(rows):
        for i in range(kernel):
            users.setdefault(r * stride + i * dilation, []).append(r)
    return tuple((j, tuple(users[j])) for j in sorted(users))


SPAN_BYTES = 16   # SPAN=1 (codegen/pool.py): the input chunk one vector load reads, aligned to its size


def span_taps(itembytes: int, kernel: int, stride: int, padding: int, dilation: int) -> tuple[tuple[tuple[int, int],
                                                                                                     ...], ...] | None:
    """The span schedule's window along the last axis (codegen/pool.py, SPAN=1): a lane group owns V consecutive
    outputs whose input span starts at chunk 0, chunks of C = SPAN_BYTES / itembytes elements with C = V x stride;
    for each of its V outputs, the (chunk, element) of each tap, chunk relative to the group's first (negative
    where the left padding reaches back). None where the stride does not divide a chunk (no whole outputs per
    chunk)."""
    chunk = max(1, SPAN_BYTES // itembytes)
    if stride > chunk or chunk % stride:
        return None
    taps = []
    for e in range(chunk // stride):
        taps.append(tuple(divmod(e * stride - padding + k * dilation, chunk) for k in range(kernel)))
    return tuple(taps)


def span_outputs(itembytes: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """V, the outputs of a lane group, where the span schedule is offered for the last axis's window (it overlaps,
    and the stride divides a chunk); 0 where not."""
    if not _slides(kernel, stride, dilation):
        return 0
    taps = span_taps(itembytes, kernel, stride, padding, dilation)
    return len(taps) if taps else 0


SPAN_LANES = 64   # SPAN=1: lane groups a program needs per warp (the widest wavefront): fewer split a chunk across
#                   lanes, and its values then cross through shared memory (gfx942, bf16 at 4 warps of 1024: 23
#                   barriers where 2 warps have 1)


def span_chunks(taps) -> tuple[int, ...]:
    """The chunks (relative to a lane group's first) the span schedule loads: those some tap reads."""
    return tuple(sorted({a for output in taps for a, _ in output}))


def _slides(KH: int, SH: int, DH: int) -> bool:
    """Whether neighbouring output rows share input rows (the window along them is longer than its stride)."""
    return KH > 1 and SH < (KH - 1) * DH + 1


def pool_space(target: Target, *, numel: int, dtype: str = "fp32", window: int = 1, KW: int = 1, KH: int = 1,
               SH: int = 1, DH: int = 1, OH: int = 1, SW: int = 1, DW: int = 1, PW: int = 0, OW: int = 1,
               ITEM: int = 4, prologue: int = 0) -> Space:
    """XBLOCK output elements (a rows x last-axis tile) per program, each looping over its window; with ROWS > 1,
    ROWS such tiles of consecutive output rows along the second-to-last axis, which load each input row they share
    once (offered where the window along those rows (KH, stride SH, dilation DH) overlaps, up to the OH output rows
    and SLIDE_LOAD_LIMIT unrolled loads); with SPAN=1, the last axis's window from aligned 16-byte chunks of the
    input (offered where that window (KW, stride SW, dilation DW, padding PW) overlaps, the stride divides a chunk,
    the OW outputs fill a lane group, no prologue; not with ROWS > 1). Knobs: XBLOCK, ROWS, SPAN, num_warps
    (+ waves_per_eu on AMD)."""
    rows = tuple(r for r in POOL_ROWS if r == 1 or (_slides(KH, SH, DH) and r <= next_power_of_two(OH)
                                                     and len(sliding_rows(r, KH, SH, DH)) * KW <= SLIDE_LOAD_LIMIT))
    v = 0 if prologue else span_outputs(ITEM, KW, SW, PW, DW)
    spans = (0, 1) if v and OW >= v else (0,)
    knobs = [Knob("XBLOCK", power_of_two_range(128, min(1024, max(128, next_power_of_two(numel))))),
             Knob("ROWS", rows), Knob("SPAN", spans), Knob("num_warps", NUM_WARPS), *_amd_knobs(target, matrix=False)]
    constraints = _common_constraints(target) + _tile_constraints(
        target, lambda v: v["XBLOCK"] * v["ROWS"], ("XBLOCK", "ROWS", "num_warps"), dtype)
    if len(spans) > 1 and len(rows) > 1:
        constraints.append(Constraint("SPAN=1 takes one output row per program", ("SPAN", "ROWS"),
                                      lambda k: not (k["SPAN"] and k["ROWS"] > 1)))
    if len(spans) > 1:
        constraints.append(Constraint(f"SPAN=1: XBLOCK / {v} lane groups >= {SPAN_LANES} per warp",
                                      ("SPAN", "XBLOCK", "num_warps"),
                                      lambda k: not k["SPAN"] or k["XBLOCK"] // v >= SPAN_LANES * k["num_warps"]))
    sizes = {"numel": numel, "window": window, "KW": KW, "KH": KH, "SH": SH, "DH": DH, "OH": OH, "SW": SW, "DW": DW,
             "PW": PW, "OW": OW, "ITEM": ITEM}
    return Space("pool", tuple(knobs), tuple(constraints), target.name, tuple(sizes.items()), dtype_key(dtype))


# --- what a Config implies ---------------------------------------------------------------------------------

def _pad(n: int, block: int) -> float:
    return math.ceil(n / block) * block / n if n else 1.0


def _no_loop(config: Config, sizes: Mapping[str, int]) -> int:
    return 1


def _no_padding(config: Config, sizes: Mapping[str, int]) -> float:
    return 1.0


def _flat_programs(config: Config, sizes: Mapping[str, int]) -> int:
    return math.ceil(sizes["numel"] / config["XBLOCK"])


def _flat_padding(config: Config, sizes: Mapping[str, int]) -> float:
    return _pad(sizes["numel"], config["XBLOCK"])


def _pool_programs(config: Config, sizes: Mapping[str, int]) -> int:
    return math.ceil(sizes["numel"] / (config["XBLOCK"] * config.get("ROWS", 1)))


def _pool_padding(config: Config, sizes: Mapping[str, int]) -> float:
    """The XBLOCK tiles' masked lanes, and ROWS > 1's output rows past the last (OH rows in groups of ROWS)."""
    return _pad(sizes["numel"], config["XBLOCK"]) * _pad(sizes.get("OH", 1), config.get("ROWS", 1))


def _row_programs(config: Config, sizes: Mapping[str, int]) -> int:
    """Row blocks x SPLIT; windowed (WAVE > 0), twice that over whole waves (phase A and B programs)."""
    blocks, wave = math.ceil(sizes["X"] / config["XBLOCK"]), config.get("WAVE", 0)
    if wave:
        return 2 * math.ceil(blocks / wave) * wave * config["SPLIT"]
    return blocks * max(1, config.get("SPLIT", 0))


def _row_reread(config: Config, sizes: Mapping[str, int], resident: int) -> float | None:
    """Elements read between a row's first pass and its second (the cost model charges the second read at HBM
    where they outgrow the cache); None where a program reads its rows once (persistent). Looped, one program per
    XBLOCK rows: the rows of the `resident` programs in flight; split rows, two kernels: the whole tensor;
    windowed: the whole tensor too, as measured. The window was meant to hold two waves of WAVE x XBLOCK rows in
    the cache, but on the H200 (2026-12-03, softmax over 4096 rows of 393,216 fp32) windowed kernels with windows
    of 3 to 12 MB ran 4676-5052 us, as slow as the two kernels (4701 us), and 1.63x the measured floor. So the
    second read is charged from HBM until a GPU shows the reuse."""
    R, X = sizes["R"], sizes["X"]
    if config.get("COOP", 0):   # cooperative: each program's chunk is one tile, normalised from registers
        return None
    if config.get("SPLIT", 0):
        return float(X * R)
    if config["persistent"]:
        return None
    return float(min(resident, _row_programs(config, sizes)) * config["XBLOCK"] * R)


def _row_padding(config: Config, sizes: Mapping[str, int]) -> float:
    return _pad(sizes["X"], config["XBLOCK"]) * _pad(sizes["R"], config["RBLOCK"])


def _reduction_trips(config: Config, sizes: Mapping[str, int]) -> int:
    if config.get("SPLIT", 0):   # each program loops over its chunk (COOP: one tile, then the chunk's others)
        return math.ceil(math.ceil(sizes["R"] / config["SPLIT"]) / config["RBLOCK"])
    return 1 if config["persistent"] else math.ceil(sizes["R"] / config["RBLOCK"])


def _scan_trips(config: Config, sizes: Mapping[str, int]) -> int:
    return math.ceil(sizes["R"] / config["RBLOCK"])


def _gemm_programs(config: Config, sizes: Mapping[str, int]) -> int:
    return (math.ceil(sizes["M"] / config["BLOCK_M"]) * math.ceil(sizes["N"] / config["BLOCK_N"])
            * config.get("split_k", 1))


def _gemm_trips(config: Config, sizes: Mapping[str, int]) -> int:
    return math.ceil(sizes["K"] / (config["BLOCK_K"] * config.get("split_k", 1)))


def _gemm_padding(config: Config, sizes: Mapping[str, int]) -> float:
    return (_pad(sizes["M"], config["BLOCK_M"]) * _pad(sizes["N"], config["BLOCK_N"])
            * _pad(sizes["K"], config["BLOCK_K"] * config.get("split_k", 1)))


def _conv_k(config: Config, sizes: Mapping[str, int]) -> Mapping[str, int]:
    """The sizes with K the form's own: a strided transposed convolution's gather form (phases off) steps every tap
    ("Kg"), its phase form a phase's taps at most ("K"; codegen's conv.work_sizes); the tap order steps each tap's
    C input channels in whole BLOCK_K tiles (K rounded up per tap: a multiple of BLOCK_K), as does taps_outer."""
    if "Kg" in sizes and not config.get("phases", True):
        return {**sizes, "K": sizes["Kg"]}
    if (config.get("taps", False) or config.get("taps_outer", False)) and sizes.get("C"):
        bk = config["BLOCK_K"]
        return {**sizes, "K": sizes["K"] // sizes["C"] * math.ceil(sizes["C"] / bk) * bk}
    return sizes


def phase_rows(L: int) -> int:
    """The phase form's widest BLOCK_M on a line of L rows (codegen's default_schedule caps it the same way)."""
    return max(16, next_power_of_two(L))


def _line_m(config: Config, sizes: Mapping[str, int]) -> float:
    """The phase form's rows as its grid pads them (conv_phases.py: tiles along each line of L o', none across
    lines), over the M the other forms tile: 1 where the form is not the phase form."""
    L = sizes.get("L")
    if not L or not config.get("phases", False):
        return 1.0
    return _pad(L, config["BLOCK_M"]) / _pad(sizes["M"], config["BLOCK_M"])


def _conv_programs(config: Config, sizes: Mapping[str, int]) -> int:
    return max(1, round(_gemm_programs(config, sizes) * _line_m(config, sizes)))


def _conv_trips(config: Config, sizes: Mapping[str, int]) -> int:
    return _gemm_trips(config, _conv_k(config, sizes))


def _conv_padding(config: Config, sizes: Mapping[str, int]) -> float:
    """gemm's tile padding, and a strided transposed convolution's taps that multiply zeros: the form's K over the
    useful products per output ("Ku": its FLOPs / 2 / (M x N)); the phase form pads each line's rows (_line_m)."""
    k_sizes = _conv_k(config, sizes)
    taps = k_sizes["K"] / sizes["Ku"] if sizes.get("Ku") else k_sizes["K"] / sizes["K"]
    return _gemm_padding(config, k_sizes) * max(1.0, taps) * _line_m(config, sizes)


def _attention_grid(BH: int, Lq: int, block_m: int, G: int = 0) -> int:
    """Programs of an unsplit attention: query blocks x batch x heads; G > 1 (PACK): blocks of G x Lq rows x batch
    x K/V heads."""
    if G > 1:
        return math.ceil(Lq * G / block_m) * (BH // G)
    return math.ceil(Lq / block_m) * BH


def _packed(config: Config, sizes: Mapping[str, int]) -> int:
    """G where the Config packs the query heads of a K/V head in its rows (PACK 1), else 0."""
    return sizes.get("G", 0) if config.get("PACK", 0) else 0


def _attention_programs(config: Config, sizes: Mapping[str, int]) -> int:
    """Query blocks x batch x heads (PACK: blocks of G x Lq rows x batch x K/V heads), times SPLIT key chunks (the
    partials kernel's grid)."""
    return _attention_grid(sizes["BH"], sizes["Lq"], config["BLOCK_M"], _packed(config, sizes)) * \
        config.get("SPLIT", 1)


def _attention_trips(config: Config, sizes: Mapping[str, int]) -> int:
    """Key blocks of a program (the longest, no causal skipping): of its chunk where the keys are split."""
    return math.ceil(math.ceil(sizes["Lk"] / config.get("SPLIT", 1)) / config["BLOCK_N"])


def _attention_split(config: Config, sizes: Mapping[str, int]) -> Split:
    """SPLIT > 1: the combine kernel's launch and the partials, (Dv + 2) fp32 values a row and chunk."""
    split = config.get("SPLIT", 1)
    return Split(1, sizes["BH"] * sizes["Lq"] * split * (sizes["Dv"] + 2)) if split > 1 else NO_SPLIT


def _attention_l2_reads(config: Config, sizes: Mapping[str, int]) -> float:
    """K and V elements the programs of one query block read: each walks its keys (its chunk's, split) over D + Dv
    columns, once per head of the grid. Unpacked GQA reads each K/V head once per query head: G times the DRAM
    bytes, from L2 (measured on the H100 at a Llama decode step, batch 32, bf16: 286 us unpacked against 178 packed,
    the same DRAM bytes); packed, or without GQA, these are the DRAM bytes themselves. The re-reads of K and V by
    further query blocks (prefill) are left out, as before this rule."""
    g = _packed(config, sizes)
    heads = sizes["BH"] // g if g > 1 else sizes["BH"]
    split = config.get("SPLIT", 1)
    return heads * split * math.ceil(sizes["Lk"] / split) * (sizes["D"] + sizes["Dv"])


def _attention_padding(config: Config, sizes: Mapping[str, int]) -> float:
    rows = sizes["Lq"] * (_packed(config, sizes) or 1)
    return _pad(rows, config["BLOCK_M"]) * _pad(sizes["Lk"], config["BLOCK_N"])


# --- what a Config costs beyond its grid (the cost model's estimates without a build) ------------------------

SPLIT_ROW_STATISTICS = 3   # partials per row and chunk: Welford's (sum, count, M2), the most any group keeps


@dataclass(frozen=True)
class Split:
    """What splitting a program's loop across programs adds: launches (the partials' zeroing or the kernel that
    reduces them) and fp32 partial values, each written once and read back once."""

    launches: int = 0
    partials: int = 0
    waits: int = 0   # times each program waits for the other programs of its row (a cooperative split: 1)
    peers: int = 0   # programs that wait for each other (a cooperative split: a row block's SPLIT)


NO_SPLIT = Split()


def _no_split(config: Config, sizes: Mapping[str, int]) -> Split:
    return NO_SPLIT


def _gemm_split(config: Config, sizes: Mapping[str, int]) -> Split:
    """split_k > 1: split_k x M x N partial products, and one more launch."""
    split_k = config.get("split_k", 1)
    return Split(1, split_k * sizes["M"] * sizes["N"]) if split_k > 1 else NO_SPLIT


def _row_split(config: Config, sizes: Mapping[str, int]) -> Split:
    """SPLIT > 0: X x SPLIT x SPLIT_ROW_STATISTICS partial statistics, and the partials kernel's launch; COOP = 1:
    the partials, no second launch (one kernel), and a wait on the row's peers per program."""
    split = config.get("SPLIT", 0)
    if split > 0 and config.get("COOP", 0):
        return Split(0, sizes["X"] * split * SPLIT_ROW_STATISTICS, waits=1, peers=split)
    return Split(1, sizes["X"] * split * SPLIT_ROW_STATISTICS) if split > 0 else NO_SPLIT


def _row_tile(config: Config, sizes: Mapping[str, int]) -> int:
    """pointwise: XBLOCK elements; reduction and scan: XBLOCK rows x RBLOCK; pool: XBLOCK outputs (one each)."""
    return config["XBLOCK"] * config.get("RBLOCK", 1)


def _pool_tile(config: Config, sizes: Mapping[str, int]) -> int:
    """A pool's ROWS accumulators of XBLOCK outputs each."""
    return config["XBLOCK"] * config.get("ROWS", 1)


def _no_lane_ops(config: Config, sizes: Mapping[str, int]) -> float:
    return 0.0


def _pool_lane_ops(config: Config, sizes: Mapping[str, int]) -> float:
    """Vector instructions x lanes a pool issues (POOL_LOAD_OPS per window load, POOL_COMBINE_OPS per max or
    add). One output row per program: each output loads its window; with SPAN=1 its V outputs share the chunks they
    read along the last axis (`span_taps`). ROWS > 1 (codegen/pool.py): per step of the
    outer window, each input row the ROWS rows read (`sliding_rows`) is loaded once (KW loads, KW - 1 combines)
    and each output row folds in its KH of them. 0 where the sizes do not say the window (the roofline decides)."""
    window, rows = sizes.get("window", 0), config.get("ROWS", 1)
    if not window:
        return 0.0
    taps = span_taps(sizes.get("ITEM", 4), sizes["KW"], sizes.get("SW", 1), sizes.get("PW", 0), sizes.get("DW", 1)) \
        if config.get("SPAN", 0) else None
    if taps:   # per output row of the window's outer axes: the chunks' loads shared by V outputs; no per-tap mask
        per_row = len(span_chunks(taps)) / len(taps) * POOL_LOAD_OPS + sizes["KW"] * POOL_COMBINE_OPS
        return sizes["numel"] * window / sizes["KW"] * per_row
    if rows == 1:
        per_output = window * (POOL_LOAD_OPS + POOL_COMBINE_OPS)
    else:
        kh, kw = sizes["KH"], sizes["KW"]
        read = len(sliding_rows(rows, kh, sizes["SH"], sizes["DH"]))
        per_step = read * kw * POOL_LOAD_OPS + (read * (kw - 1) + rows * kh) * POOL_COMBINE_OPS
        per_output = window / (kh * kw) * per_step / rows
    return sizes["numel"] * per_output


def _attention_tile(config: Config, sizes: Mapping[str, int]) -> int:
    """The fp32 accumulator (BLOCK_M x Dv, padded) and scores (BLOCK_M x BLOCK_N): attention_space's budget."""
    return config["BLOCK_M"] * (next_power_of_two(max(16, sizes["Dv"])) + config["BLOCK_N"])


def _no_lds(config: Config, sizes: Mapping[str, int], target: Target, dtype: str) -> int:
    return 0


def _row_lds(config: Config, sizes: Mapping[str, int], target: Target, dtype: str) -> int:
    """A reduction's cross-warp partials: XBLOCK x num_warps fp32 values."""
    return config["XBLOCK"] * config.get("num_warps", 4) * 4


def _gemm_lds(config: Config, sizes: Mapping[str, int], target: Target, dtype: str) -> int:
    values = config.as_dict() | {"P": sizes.get("P", 1)} | gemv_tile(sizes.get("M", 0), sizes.get("N", 0))
    return gemm_lds_bytes(values, target, dtype)


def _attention_lds(config: Config, sizes: Mapping[str, int], target: Target, dtype: str) -> int:
    return attention_lds_bytes(config.as_dict(), target, dtype, sizes["D"], sizes["Dv"], sizes.get("MASK", 0),
                               sizes.get("KLOADS", 0))


SizesRule = Callable[[Config, Mapping[str, int]], Any]
LdsRule = Callable[[Config, Mapping[str, int], Target, str], int]


@dataclass(frozen=True)
class SpaceFamily:
    """One family as the search sees it: its space for a target and the problem's sizes (the sizes codegen's
    `Family.work_sizes` gives), the known-good schedules to time first, and what a Config of it implies for the
    cost model: programs in the grid (None: it launches no kernel of its own), trips of the main loop, the work
    done including masked-off tile lanes over the useful work, and (costmodel/analytical.py) the values a
    program holds in registers, its LDS before a build, and what a split of its loop adds."""

    name: str                                        # the plan's family name (FusionGroup.family)
    space: Callable[..., Space]                      # (target, dtype=..., **sizes) -> Space
    programs: SizesRule | None
    loop_trips: SizesRule = _no_loop
    padding: SizesRule = _no_padding
    seeds: Callable[..., list[dict]] | None = None   # (target, dtype=..., **sizes) -> knob dicts
    tile_values: SizesRule = _row_tile               # values a program holds (registers ~ 16 + 2 per thread's value)
    lds: LdsRule = _no_lds                           # (config, sizes, target, dtype) -> LDS bytes per block
    split: SizesRule = _no_split                     # -> Split: launches and partials a split adds
    # vector instructions x lanes beyond the roofline's FLOPs, where the kernel issues more than it computes (a
    # pool's window loads): the cost model's instruction-issue bound
    lane_ops: SizesRule = _no_lane_ops
    # a C = A @ B tiling (BLOCK_M x BLOCK_N x BLOCK_K over sizes M, N, K): the cost model fits its registers to
    # the accumulator and operand tiles, and adds the operands' L2 feed and re-reads (tile_values unused)
    matrix_tiles: bool = False
    # (config, sizes, resident programs) -> elements read between a row's first and second pass (None: one pass)
    reread: Callable[[Config, Mapping[str, int], int], float | None] | None = None
    # the space takes on_gpu (make_space): knobs only a GPU runs (programs waiting on each other), never offered
    # where the interpreter runs the kernels
    gpu_knobs: bool = False
    # the cost model's bytes-in-flight term applies (costmodel/analytical.py, inflight_penalty): a streaming kernel,
    # whose memory traffic a trip is what its program loads and stores. Not for tiled products (a GEMM's, a
    # convolution's, attention's operand tiles come mostly from L2, pipelined over stages: their DRAM bytes a trip
    # say little of what a program has in flight; the fit that set the term's constant was on streaming kernels)
    inflight: bool = True
    # elements the programs read through L2 beyond what the DRAM term counts (None: no such rule): attention's K and
    # V tiles, each program walking its keys (the cost model's L2 feed term); and whether its grid quantizes over
    # the compute units rather than the resident slots (a program per CU streams its keys at the CU's share)
    l2_reads: SizesRule | None = None
    waves_over_cus: bool = False


SPACE_FAMILIES: dict[str, SpaceFamily] = {f.name: f for f in (
    SpaceFamily("pointwise", pointwise_space, _flat_programs, padding=_flat_padding),
    SpaceFamily("reduction", reduction_space, _row_programs, _reduction_trips, _row_padding, seeds=reduction_seeds,
                lds=_row_lds, split=_row_split, reread=_row_reread, gpu_knobs=True),
    SpaceFamily("matmul", gemm_space, _gemm_programs, _gemm_trips, _gemm_padding, seeds=gemm_seeds,
                lds=_gemm_lds, split=_gemm_split, matrix_tiles=True, inflight=False),
    SpaceFamily("scan", scan_space, _row_programs, _scan_trips, _row_padding),
    SpaceFamily("pool", pool_space, _pool_programs, padding=_pool_padding, tile_values=_pool_tile,
                lane_ops=_pool_lane_ops),
    SpaceFamily("attention", attention_space, _attention_programs, _attention_trips, _attention_padding,
                seeds=attention_seeds, tile_values=_attention_tile, lds=_attention_lds, split=_attention_split,
                inflight=False, l2_reads=_attention_l2_reads, waves_over_cus=True),
    SpaceFamily("conv", conv_space, _conv_programs, _conv_trips, _conv_padding, seeds=conv_seeds, lds=_gemm_lds,
                matrix_tiles=True, inflight=False),
    SpaceFamily("library", library_space, None),
)}


def space_family(family: str) -> SpaceFamily:
    """The search's entry for `family` (ValueError naming the known ones where there is none)."""
    try:
        return SPACE_FAMILIES[family]
    except KeyError:
        raise ValueError(f"no search space for family {family!r}; known: {', '.join(SPACE_FAMILIES)}") from None


def make_space(family: str, target: Target, *, on_gpu: bool = False, **sizes) -> Space:
    """The space of `family` (the plan's family name: a key of SPACE_FAMILIES) for `target` and the problem
    `sizes`. on_gpu: the candidates run on the target's GPU, never under Triton's interpreter (measured mode),
    which a family with GPU-only knobs (SpaceFamily.gpu_knobs: the cooperative split) needs to offer them."""
    fam = space_family(family)
    return fam.space(target, **sizes, **({"on_gpu": on_gpu} if fam.gpu_knobs else {}))


def seed_knobs(family: str, target: Target, *, on_gpu: bool = False, **sizes) -> list[dict]:
    """Known-good schedules of `family` for `target` at these sizes (see gemm_seeds); [] for most. on_gpu: as
    make_space's."""
    fam = SPACE_FAMILIES.get(family)
    if fam is None or fam.seeds is None:
        return []
    return fam.seeds(target, **sizes, **({"on_gpu": on_gpu} if fam.gpu_knobs else {}))


def program_count(config: Config, sizes: Mapping[str, int]) -> int:
    """Programs (workgroups / thread blocks) in the launch grid."""
    fam = SPACE_FAMILIES.get(config.family)
    if fam is None or fam.programs is None:
        raise ValueError(f"no grid rule for family {config.family!r}")
    return fam.programs(config, sizes)


def loop_trips(config: Config, sizes: Mapping[str, int]) -> int:
    """Iterations of the program's main loop (1 with no loop)."""
    fam = SPACE_FAMILIES.get(config.family)
    return fam.loop_trips(config, sizes) if fam is not None else 1


def padding_factor(config: Config, sizes: Mapping[str, int]) -> float:
    """Work done including masked-off tile lanes over useful work (>= 1)."""
    fam = SPACE_FAMILIES.get(config.family)
    return fam.padding(config, sizes) if fam is not None else 1.0
