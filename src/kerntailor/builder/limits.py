"""Whether a compiled kernel fits the target: LDS, registers, threads per block, spills."""

from __future__ import annotations

from kerntailor.builder.types import IsaFacts
from kerntailor.targets.occupancy import occupancy
from kerntailor.targets.spec import Target

# Threads per block (workgroup) on every target we support: CUDA's limit, and HIP's default
# amdgpu-flat-work-group-size upper bound (1024).
MAX_THREADS_PER_BLOCK = 1024


def check_limits(facts: IsaFacts, target: Target, *, allow_spills: bool = True) -> str | None:
    """The reasons (joined by "; ") a build cannot run on `target` as configured, or None.

    allow_spills=False rejects spills to memory (`IsaFacts.spills_to_memory`), not AMD SGPR spills
    into VGPR lanes.
    """
    reasons = []
    if facts.lds_bytes > target.lds_per_block:
        reasons.append(f"LDS {facts.lds_bytes} B exceeds the {target.lds_per_block} B per block of {target.name}")
    if facts.registers > target.max_registers_per_thread:
        reasons.append(f"{facts.registers} registers per thread exceed the {target.max_registers_per_thread} "
                       f"of {target.name}")
    threads = facts.num_warps * target.warp_size
    if threads > MAX_THREADS_PER_BLOCK:
        reasons.append(f"{facts.num_warps} warps x {target.warp_size} = {threads} threads per block exceed "
                       f"{MAX_THREADS_PER_BLOCK}")
    if not allow_spills and facts.spills_to_memory:
        what = (f"{facts.spills} B of spill stores+loads" if facts.backend == "cuda"
                else f"{facts.vgpr_spills or 0} VGPR spills")
        reasons.append(f"{what} (scratch {facts.scratch_bytes} B) where spills are forbidden")
    return "; ".join(reasons) or None


def rule_occupancy(facts: IsaFacts, target: Target) -> tuple[int, str]:
    """(occupancy, what limits it) from the target's rule (`kerntailor.targets.occupancy`).

    The number is waves per SIMD on AMD (comparable with the compiler's `; Occupancy`, but counting
    Triton's dynamically allocated LDS, which the compiler does not see) and warps per SM on NVIDIA.
    """
    occ = occupancy(target, registers_per_thread=facts.registers, lds_bytes_per_block=facts.lds_bytes,
                    threads_per_block=facts.num_warps * target.warp_size)
    return (occ.waves_per_simd if target.is_amd else occ.waves_per_cu), occ.limited_by
