"""The analytical cost model: predicted seconds for a Candidate from the roofline, occupancy, the grid and
spills. It needs no measurements; it ranks, the GPU decides.

    seconds = launches x LAUNCH_OVERHEAD_S[vendor]
            + max(compute, memory, l2 feed) x quantization

Each term, with where its number comes from:

- roofline (`targets.roofline_floor`): compute = flops / peak rate of the dtype (matrix units if the
  work is matrix work), memory = bytes / memory bandwidth, vendor peaks from the targets table (or
  measured `Ceilings` when given). Every other term only multiplies or adds to these, never divides, so a
  prediction is never below the floor.
- tile padding (compute): masked-off lanes of the last tile still issue; compute x padded work / work
  (`search.families.padding_factor`). A matrix problem whose ISA has no matrix instructions
  (`IsaFacts.matrix_instr_count == 0`) runs at the vector rate instead: compute x matrix peak / vector peak
  (the dtype's vector rate, else fp32's: Triton upcasts 16-bit arithmetic outside `tl.dot`).
- instruction issue (compute): a family that issues more vector instructions than its FLOPs say
  (`SpaceFamily.lane_ops`: a pool's masked window loads and combines) runs no faster than lane_ops /
  (ISSUE_LANES_PER_CLK_PER_CU x CUs x clock); compute is the larger of that and the FLOPs' term. The rate [U]:
  AMD CDNA 4 SIMDs x 16 lanes per clock, NVIDIA 4 sub-partitions x 32 lanes per clock; the counts per window
  element are search/families.py's (POOL_LOAD_OPS, POOL_COMBINE_OPS). A pool whose neighbouring output rows
  share input rows (ROWS > 1) loads each of them once, so it predicts faster than one row per program there.
- traffic (memory): the compulsory bytes (or the candidate's own `bytes_moved` if larger), plus
  * gemm operand re-reads: programs that run at once share A and B tiles through L2, so each wave of
    programs reads (r x BLOCK_M + c x BLOCK_N) x K elements, r x c being the block of output tiles the wave
    covers (GROUP_M rows at a time). The classic wave model of tiled GEMM traffic; it assumes L2 holds the
    K-slices a wave is using and nothing across waves (an estimate, not measured here).
  * split-K partials: split_k x M x N fp32 values written and read back once (2 x 4 bytes each), and one
    more launch (the zeroing or reduction of the partials).
  * split rows (a reduction with SPLIT > 0): X x SPLIT x SPLIT_ROW_STATISTICS (3: Welford's sum, count, M2)
    fp32 partials written once and read back by each of the row's SPLIT programs (L2 serves all but the first
    read; counted once, 2 x 4 bytes each), and one more launch (the partials kernel runs before the normalising
    one). The programs become X / XBLOCK x SPLIT, which is what the wave quantization below rewards.
  * a cooperative split (COOP = 1: one kernel, each program reads its chunk once and waits for its row's
    SPLIT programs' partials): the partials as above, no second launch and no second read (`SpaceFamily.reread`
    None), and COOP_SYNC_S per wave of rows for the wait (`Split.waits`): only slots // SPLIT row blocks are in
    flight (`Split.peers`, the programs that wait for each other; slots from the registers the build reports, or
    the estimate), so the rows go in ceil(row blocks / that) waves, each paying a wait. 96 programs a row of 32
    registers (the probe's P4) keep 11 rows in flight on the H200; 128 of 80 registers (the generated kernel before
    2026-12-03) 3, and that kernel measured 2.5x slower than P4: the wait per row wave is what it lost.
  Which of these a family has comes from its entry in search/families.py (`SpaceFamily.split`,
  `matrix_tiles`), never from its name.
  * a row read twice (a looped reduction's second pass, split rows' normalising pass; `second_read`): the
    rows once more, from HBM when the rows read in between outgrow the cache (`Target.reuse_cache_bytes`: the
    resident programs' rows of a looped kernel, the whole tensor between split rows' two kernels, two waves of a
    windowed split), else from the cache, in the L2 feed term. Before, no second read was charged: 39_L2Norm_
    (32,768 looped rows of 65,535) was predicted at its floor and measured at 2.17x it on the H200.
  * spills: each spilled register is stored and loaded once per trip of the main loop by every thread
    of every program: AMD `vgpr_spills` x 4 B x 2 (scratch size if larger), NVIDIA the `ptxas` spill
    store + load bytes. Pessimistic (scratch partly hits in cache) so spilling schedules rank low; SGPR
    spills on AMD go to VGPR lanes and cost nothing here.
- L2 feed (gemm): every program streams its A and B tiles from L2, (BLOCK_M + BLOCK_N) x K elements per
  output tile, so small tiles starve the matrix units (a 16x64 fp16 tile does 6.4 FLOP per byte fed,
  a 128x128 one 64). l2 = those bytes / (L2_BYTES_PER_CLK_PER_CU x CUs x clock). Constants [U], not
  measured here: AMD 54 B/clk per CU (CDNA3's L2: 128 B/clk per channel, 16 channels per XCD of 38 CUs,
  as recalled from AMD's CDNA3 white paper), NVIDIA 48 B/clk per SM (A100 white paper: 5120 B/clk of L2
  read bandwidth over 108 SMs; assumed the same per SM on Hopper).
- low occupancy (memory): too few resident waves cannot hide memory latency (Little's law: bandwidth =
  bytes in flight / latency). Below MIN_WAVES_PER_SIMD_AMD = 4 waves per SIMD (AMD) or
  MIN_OCCUPANCY_NVIDIA = 25 % of the SM's 64 warps (NVIDIA), memory x (threshold / achieved) **
  OCCUPANCY_EXPONENT. Both thresholds are the usual rules of thumb for latency hiding on these GPUs, not
  measured here [U]. Little's law with one load in flight per wave gives exponent 1; Triton kernels keep
  several vector loads in flight per wave, so the loss is smaller: OCCUPANCY_EXPONENT = 0.5 is a guess
  [U], for the learned model to correct.
  Occupancy is `IsaFacts.occupancy_rule` when the build gives it, else `targets.occupancy` on the facts.
- bytes in flight (memory): Little's law on the grid itself. A program moves traffic / (programs x loop trips)
  bytes a trip, and the programs resident at once (min(programs, slots)) keep that many in flight; the memory
  needs bandwidth x MEMORY_LATENCY_S[vendor] in flight to stream at its rate, so memory x (needed / in flight)
  where that is over 1 (`inflight_penalty`). The warps rule above cannot see it: 62_Matmul_GroupNorm's norm, as
  524,288 one-warp programs of a 16-element row (64 B read, 64 B written), fills the SM's 32 block slots (50 % of
  its warps: no occupancy penalty) with 4 KB in flight an SM, a fifth of what the H200 needs; it was predicted
  2 % faster than 64 rows a program (17.1 vs 17.4 us) and chosen. The memory term takes the larger of the two
  penalties (both are the same cause, latency not hidden). Streaming families only (`SpaceFamily.inflight`): a
  GEMM's, a convolution's or attention's tiles come mostly from L2 over pipelined stages, which this count of DRAM
  bytes a trip does not see. MEMORY_LATENCY_S is an effective constant, not a
  pointer-chase latency: NVIDIA's 1.5 us was fitted on the committed H200 stores (benchmarks/costmodel_inflight.py,
  data/costmodel_inflight_h200_2026-12-05.json): on the 930 schedules of the 2026-11-30 runs the model's
  top-1 hit rate went 0.11 -> 0.37 and its mean Spearman per kernel 0.14 -> 0.70 (the learned model's there:
  0.37, 0.72); on the 1,320 of 2026-12-01, not used to fit (chosen by the learned ranker, GEMMs among them),
  0.22 -> 0.26 and 0.31 -> 0.31; over both, reductions 0.38 -> 0.67, pointwise 0.09 -> 0.55. AMD's 2.4 us is that
  fit scaled by the ratio of recalled HBM latencies (MI300X about 0.8 us behind its Infinity Cache, H100 about 0.5
  us), not measured [U].
- wave quantization: programs P run in waves of slots = CUs x resident programs per CU
  (`targets.occupancy(...).blocks_per_cu`); the last, partial wave takes as long as a full one, so time
  scales with ceil(P / slots) / (P / slots). A grid smaller than one wave leaves slots idle and pays the
  same way. Attention (`SpaceFamily.waves_over_cus`) quantizes over the compute units instead: a program per CU
  streams its keys from a pipelined loop (measured on the H100 at a Llama decode step: 256 packed programs of 16 x
  64 ran at 3.01 TB/s, the copy rate, where slots-based waves charged them 2.6x), and its programs' re-reads of K
  and V from L2 are added to the memory term (`_l2_reread_seconds`).
- launch overhead: LAUNCH_OVERHEAD_S = 5 us on AMD, 3 us on NVIDIA per launch, within the ~3-5 us
  commonly seen for hipLaunchKernel / cudaLaunchKernel of a Triton kernel from Python; recalled, not
  measured here [U].

Without ISA facts (ranking before building) resource use is estimated by `estimate_facts`:
- gemm registers, fitted to cross-compiles of a plain Triton matmul with triton 3.6.0 on CPU (fp16,
  tiles 64x64x32 to 256x256x64, 4 and 8 warps, num_stages 1-3): AMD VGPRs ~ 1.5 x acc + operand
  elements x itemsize / 2 + 23 (least squares over 7 gfx942 configs, within 22 %), NVIDIA registers ~
  acc + operand elements x itemsize / 4 + 40 (2 sm_90 configs, within 8 %), where acc =
  BLOCK_M x BLOCK_N / threads and operand elements = (BLOCK_M + BLOCK_N) x BLOCK_K / threads. On AMD
  `waves_per_eu = n` caps VGPRs at 512 / n and the rest spill (gpu-facts.md: a 128x128x64 fp16 GEMM with
  waves_per_eu=2 spilled 28 VGPRs); on NVIDIA `maxnreg = n` caps them at n [U: ptxas may fit the kernel in
  the cap without spilling, as the cooperative softmax's 48 did in 40 on the H200]; beyond 512 (AMD) or 255
  (NVIDIA) the rest spill.
- every other family's registers ~ 16 + 2 x values per thread (32-bit registers) [U], rough, the values being
  its `SpaceFamily.tile_values` (a row tile's XBLOCK x RBLOCK; attention's accumulator and scores); LDS by its
  `SpaceFamily.lds` (a reduction's XBLOCK x num_warps x 4 B of cross-warp partials; gemm by the rule measured in
  `search/families.py`; none where the family has no rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kerntailor.builder.types import IsaFacts
from kerntailor.costmodel.candidate import Candidate
from kerntailor.search.families import (
    itemsize,
    loop_trips,
    padding_factor,
    program_count,
    space_family,
)
from kerntailor.targets.occupancy import occupancy
from kerntailor.targets.roofline import Ceilings, roofline_floor
from kerntailor.targets.spec import Target

LAUNCH_OVERHEAD_S = {"amd": 5e-6, "nvidia": 3e-6}
MIN_WAVES_PER_SIMD_AMD = 4
MIN_OCCUPANCY_NVIDIA = 0.25
OCCUPANCY_EXPONENT = 0.5
MEMORY_LATENCY_S = {"amd": 2.4e-6, "nvidia": 1.5e-6}   # the bytes-in-flight term: fitted (NVIDIA), scaled [U]
# a cooperative split's wait for its row's peers (publish, atomic flag, spin, the partials read back), per wave of
# rows in flight: on the H200 (benchmarks/longrow_probe.py's P4, softmax over 4096 x 393,216 fp32, 96 programs of
# 4096 elements a row, 32 registers: 8 programs an SM, 11 rows in flight, 373 waves) the cooperative kernel ran 726
# us over the copy: 1.9 us a wave. The generated kernel then (SPLIT 128, 80 registers: 3 rows in flight, 1366
# waves) ran 6410 us over it, 4.7 us a wave; the probe's figure, for the learned model to correct
COOP_SYNC_S = 2e-6
SPLIT_K_PARTIAL_BYTES = 2 * 4        # each fp32 partial (a split's: split-K or split rows) written and read back once
L2_BYTES_PER_CLK_PER_CU = {"amd": 54, "nvidia": 48}
ISSUE_LANES_PER_CLK_PER_CU = {"amd": 64, "nvidia": 128}


@dataclass(frozen=True)
class Prediction:
    """A predicted time and the terms it was made of (seconds, bytes, factors >= 1)."""

    seconds: float                # math.inf when the candidate cannot launch on the target
    floor_seconds: float          # roofline floor of the work (no launch overhead)
    compute_seconds: float        # floor compute x padding (x matrix / vector rate without matrix instrs), or issue
    memory_seconds: float         # traffic / bandwidth x occupancy penalty
    l2_seconds: float             # gemm operand tiles streamed from L2 / L2 bandwidth (0 for other families)
    traffic_bytes: float          # compulsory + re-reads + split-K partials + spills
    spill_bytes: float
    occupancy_penalty: float      # the larger of the warps rule's and the bytes-in-flight term's
    quantization: float
    programs: int
    slots: int                    # CUs x resident programs per CU
    launches: int
    launch_seconds: float
    facts_source: str             # "isa" (from the build) | "estimated"
    bound: str                    # "compute" | "memory" | "l2" | "no-fit"
    note: str = ""

    @property
    def microseconds(self) -> float:
        return self.seconds * 1e6


# --- resource estimates without a build ------------------------------------------------------------------

def _threads(config, target: Target) -> int:
    return config.get("num_warps", 4) * target.warp_size


def estimate_facts(candidate: Candidate, target: Target) -> IsaFacts:
    """Predicted registers, spills and LDS of a candidate that has not been built (module docstring)."""
    config, work = candidate.config, candidate.work
    fam, sizes = space_family(config.family), work.size_map
    threads = _threads(config, target)
    size = itemsize(work.dtype)
    if fam.matrix_tiles:
        dual = sizes.get("P", 1)   # a dual group's products (plan/dual.py): an accumulator and a B tile each
        acc = dual * config["BLOCK_M"] * config["BLOCK_N"] / threads
        operands = (config["BLOCK_M"] + dual * config["BLOCK_N"]) * config["BLOCK_K"] / threads
        if target.is_amd:
            regs = 1.5 * acc + operands * size / 2 + 23
        else:
            regs = acc + operands * size / 4 + 40
    else:
        regs = 16 + 2 * (fam.tile_values(config, sizes) / threads) * max(1, size // 4)
    lds = fam.lds(config, sizes, target, work.dtype)
    regs = int(math.ceil(regs))
    cap = target.max_registers_per_thread
    if target.is_amd and config.get("waves_per_eu", 0):
        cap = min(cap, target.registers_per_simd // config["waves_per_eu"])
    if target.backend == "cuda" and config.get("maxnreg", 0):
        cap = min(cap, config["maxnreg"])
    spilled = max(0, regs - cap)
    regs = min(regs, cap)
    if target.is_amd:
        return IsaFacts(backend="hip", arch=target.arch, num_warps=config.get("num_warps", 4), registers=regs,
                        spills=spilled, scratch_bytes=4 * spilled, lds_bytes=lds, vgprs=regs, agprs=0,
                        vgpr_spills=spilled, sgpr_spills=0, matrix_instr_count=int(work.matrix))
    return IsaFacts(backend="cuda", arch=target.arch, num_warps=config.get("num_warps", 4), registers=regs,
                    spills=spilled * 4 * 2, scratch_bytes=4 * spilled, lds_bytes=lds,
                    matrix_instr_count=int(work.matrix))


# --- the terms --------------------------------------------------------------------------------------------

def wave_quantization(programs: int, slots: int) -> float:
    """ceil(waves) / waves for `programs` over `slots` concurrent programs (>= 1; inf with no slots)."""
    if slots <= 0:
        return math.inf
    if programs <= 0:
        return 1.0
    waves = programs / slots
    return math.ceil(waves) / waves


def row_waves(programs: int, slots: int, peers: int) -> int:
    """Waves a cooperative grid runs in: its groups of `peers` programs (a row block's SPLIT) in flight at once are
    slots // peers (at least one: the search keeps SPLIT <= CUs), whole groups, not slots' worth of programs."""
    peers = max(1, peers)
    return math.ceil(math.ceil(programs / peers) / max(1, slots // peers))


def spill_bytes_per_thread(facts: IsaFacts) -> float:
    """Spill traffic one thread makes per trip of the main loop (stores + loads)."""
    if not facts.spills_to_memory:
        return 0.0
    if facts.backend == "hip":
        return 2.0 * max(4 * (facts.vgpr_spills or 0), facts.scratch_bytes)
    return float(facts.spills)


def occupancy_penalty(facts: IsaFacts, target: Target, computed_waves: int) -> float:
    """(threshold / achieved) ** OCCUPANCY_EXPONENT below the latency-hiding threshold, else 1."""
    achieved = facts.occupancy_rule if facts.occupancy_rule is not None else computed_waves
    if target.is_amd:
        fraction, threshold = achieved, MIN_WAVES_PER_SIMD_AMD
    else:
        fraction, threshold = achieved / target.max_waves_per_simd, MIN_OCCUPANCY_NVIDIA
    if fraction <= 0:
        return math.inf
    return max(1.0, threshold / fraction) ** OCCUPANCY_EXPONENT


def _l2_reread_seconds(read_bytes: float, traffic: float, target: Target) -> float:
    """Seconds of the bytes programs read beyond the DRAM traffic (read again from L2), at the L2's rate, added to
    the memory term, not overlapped with it: they share the L2-to-CU paths with the stream from DRAM. Attention
    (SpaceFamily.l2_reads): at a Llama decode step on the H100 (batch 32, bf16, 537 MB of K and V) the unpacked
    kernel, whose four query heads of a K/V head each read it (2.15 GB from L2), ran 286 us in a CUDA graph, the
    packed one 178 (benchmarks/data/h100_2026-12-05f/); this term predicts 160 + 145 and 160 [one point, not fitted]."""
    l2_bandwidth = L2_BYTES_PER_CLK_PER_CU[target.vendor] * target.compute_units * target.clock_mhz * 1e6
    return max(0.0, read_bytes - traffic) / l2_bandwidth


def inflight_penalty(traffic: float, programs: int, trips: int, slots: int, bandwidth: float,
                     latency_s: float) -> float:
    """Little's law: (bandwidth x latency) / (bytes the resident programs have in flight a trip), at least 1."""
    if programs <= 0 or traffic <= 0 or bandwidth <= 0:
        return 1.0
    per_trip = traffic / (programs * max(1, trips))
    inflight = min(programs, max(1, slots)) * per_trip
    return max(1.0, bandwidth * latency_s / inflight)


def gemm_operand_bytes(config, sizes, size: int, concurrent: int) -> float:
    """A and B bytes read from memory when `concurrent` programs share tiles through L2 (module docstring)."""
    M, N, K = sizes["M"], sizes["N"], sizes["K"]
    tiles_m, tiles_n = math.ceil(M / config["BLOCK_M"]), math.ceil(N / config["BLOCK_N"])
    tiles = tiles_m * tiles_n
    wave = max(1, min(tiles, concurrent))
    rows = min(tiles_m, max(config.get("GROUP_M", 1), math.ceil(wave / tiles_n)))
    cols = min(tiles_n, math.ceil(wave / rows))
    per_wave = (min(rows * config["BLOCK_M"], M) + sizes.get("P", 1) * min(cols * config["BLOCK_N"], N)) * K * size
    return per_wave * tiles / wave


def gemm_l2_bytes(config, sizes, size: int) -> float:
    """Operand bytes all programs stream from L2: (BLOCK_M + BLOCK_N) x padded K per output tile."""
    tiles = math.ceil(sizes["M"] / config["BLOCK_M"]) * math.ceil(sizes["N"] / config["BLOCK_N"])
    k_padded = loop_trips(config, sizes) * config["BLOCK_K"] * config.get("split_k", 1)
    return tiles * (config["BLOCK_M"] + sizes.get("P", 1) * config["BLOCK_N"]) * k_padded * size


def second_read(fam, config, sizes, work, target: Target, slots: int) -> tuple[float, bool] | None:
    """(bytes, from the cache) of a row group's second read of its rows, or None where there is none: a
    persistent kernel, or no full-size output (compulsory bytes under 1.5 x one read of the rows: a per-row
    result needs one pass; a group reading two full-size inputs is taken for one with an output [U]). The rows
    read between a row's two reads (`SpaceFamily.reread`: the resident programs' rows, the whole tensor for two
    kernels, two waves when windowed) come back from the cache when they fit Target.reuse_cache_bytes."""
    if fam.reread is None or "R" not in sizes or "X" not in sizes:
        return None
    size = itemsize(work.dtype)
    once = sizes["R"] * sizes["X"] * size
    if work.min_bytes < 1.5 * once:
        return None
    between = fam.reread(config, sizes, max(1, slots))
    if between is None:
        return None
    return float(once), between * size <= target.reuse_cache_bytes


class AnalyticalModel:
    """Predicts seconds on `target` from the roofline and the candidate's resources (module docstring)."""

    name = "analytical"

    def __init__(self, target: Target, *, ceilings: Ceilings | None = None, launch_overhead_s: float | None = None):
        self.target = target
        self.ceilings = ceilings
        self.launch_overhead_s = (LAUNCH_OVERHEAD_S[target.vendor] if launch_overhead_s is None
                                  else launch_overhead_s)

    def predict(self, candidates: Sequence[Candidate]) -> list[float]:
        return [self.explain(c).seconds for c in candidates]

    def explain(self, candidate: Candidate) -> Prediction:
        t, config, work = self.target, candidate.config, candidate.work
        fam, sizes = space_family(config.family), work.size_map
        floor = roofline_floor(t, flops=work.flops, min_bytes=work.min_bytes, dtype=work.dtype,
                               matrix=work.matrix, ceilings=self.ceilings, vector_flops=work.vector_flops)
        facts, source = candidate.facts, "isa"
        if facts is None:
            facts, source = estimate_facts(candidate, t), "estimated"
        threads = facts.num_warps * t.warp_size
        occ = occupancy(t, registers_per_thread=facts.registers, lds_bytes_per_block=facts.lds_bytes,
                        threads_per_block=threads)
        programs = program_count(config, sizes)
        slots = t.compute_units * occ.blocks_per_cu
        split = fam.split(config, sizes)
        launches = 1 + split.launches
        launch_s = launches * self.launch_overhead_s

        compute = floor.compute_seconds * padding_factor(config, sizes)
        if work.matrix and facts.matrix_instr_count == 0 and candidate.facts is not None:
            vectors = dict(t.vector_flops)   # 16-bit math without dot runs upcast, at the fp32 rate
            vector = vectors.get(floor.rate_dtype) or vectors.get("fp32", 0.0)
            if vector > 0:
                compute *= max(1.0, floor.peak_flops / vector)
        lane_ops = fam.lane_ops(config, sizes)
        if lane_ops:
            compute = max(compute, lane_ops / (ISSUE_LANES_PER_CLK_PER_CU[t.vendor] * t.compute_units
                                               * t.clock_mhz * 1e6))

        traffic = candidate.traffic_floor()
        l2 = 0.0
        if fam.matrix_tiles:
            split_k = config.get("split_k", 1)
            l2_bandwidth = L2_BYTES_PER_CLK_PER_CU[t.vendor] * t.compute_units * t.clock_mhz * 1e6
            l2 = gemm_l2_bytes(config, sizes, itemsize(work.dtype)) / l2_bandwidth
            compulsory = (sizes["M"] + sizes.get("P", 1) * sizes["N"]) * sizes["K"] * itemsize(work.dtype)
            reread = gemm_operand_bytes(config, sizes, itemsize(work.dtype), max(1, slots) // split_k or 1)
            traffic += max(0.0, reread - compulsory)
        reread_s = 0.0   # attention: its programs' reads of K and V past the DRAM bytes, from L2 (_l2_reread_seconds)
        if fam.l2_reads is not None:
            reread_s = _l2_reread_seconds(fam.l2_reads(config, sizes) * itemsize(work.dtype), traffic, t)
        traffic += split.partials * SPLIT_K_PARTIAL_BYTES
        second = second_read(fam, config, sizes, work, t, slots)
        if second:   # a row read twice: from HBM again, or from the cache at its rate
            bytes_, cached = second
            if cached:
                l2 += bytes_ / (L2_BYTES_PER_CLK_PER_CU[t.vendor] * t.compute_units * t.clock_mhz * 1e6)
            else:
                traffic += bytes_
        spills = spill_bytes_per_thread(facts) * threads * programs * loop_trips(config, sizes)
        traffic += spills

        if not occ.fits:
            return Prediction(math.inf, floor.seconds, compute, math.inf, l2, traffic, spills, math.inf, math.inf,
                              programs, 0, launches, launch_s, source, "no-fit",
                              f"cannot launch: limited by {occ.limited_by}")
        penalty = occupancy_penalty(facts, t, occ.waves_per_simd if t.is_amd else occ.waves_per_cu)
        if fam.inflight:
            penalty = max(penalty, inflight_penalty(traffic, programs, loop_trips(config, sizes), slots,
                                                    floor.bandwidth, MEMORY_LATENCY_S[t.vendor]))
        memory = traffic / floor.bandwidth * penalty + reread_s
        quant = wave_quantization(programs, t.compute_units if fam.waves_over_cus else slots)
        sync = split.waits * COOP_SYNC_S * row_waves(programs, slots, split.peers)   # cooperative: each wave waits
        memory_q = memory * quant
        if fam.inflight and programs < slots:
            # an under-filled grid: the larger of the in-flight shortfall and slots / programs, not their product:
            # 4 programs of an iota (4096 elements) came out at 1.46 ms on mi300x (x388 in flight times x608) where
            # a few trips of latency take microseconds. Ranking the committed H200 schedules, the product scored a
            # little better (benchmarks/data/cpu_2026-12-05e/costmodel_underfilled.md); the times it gave tiny
            # kernels were the report's "0.22x eager" for a GEMM whose two iota kernels are 32 KB each
            memory_q = traffic / floor.bandwidth * max(penalty, quant) + reread_s
        kernel = max(compute * quant, memory_q, l2 * quant) + sync
        seconds = max(kernel, floor.seconds) + launch_s
        bound = max((compute, "compute"), (memory, "memory"), (l2, "l2"), key=lambda tb: tb[0])[1]
        return Prediction(seconds, floor.seconds, compute, memory, l2, traffic, spills, penalty, quant, programs,
                          slots, launches, launch_s, source, bound)
