"""Occupancy: how many waves (warps) of a kernel fit on one CU (SM) at once, and what limits it.

AMD CDNA (gpu-facts.md; LLVM AMDGPUBaseInfo.cpp / AMDGPUSubtarget.cpp):
  VGPRs (arch + AGPR) are allocated in granules of 8 from 512 per SIMD lane, so
  waves per SIMD by registers = min(8, floor(512 / alignTo(vgprs, 8))); 300 VGPRs -> 1, 128 -> 4.
  A workgroup's waves spread over the CU's 4 SIMDs; workgroups per CU are limited by LDS
  (floor(LDS per CU / LDS per workgroup)) and by 16 barriers per CU for multi-wave workgroups.
  Waves per SIMD reported = ceil(resident waves per CU / 4), as LLVM's `; Occupancy` does.

NVIDIA (CUDA's cuda_occupancy.h):
  registers per warp = roundUp(regs per thread x 32, 256); warps per SM by registers =
  floor(16384 / regs per warp) x 4 sub-partitions; shared memory per block adds 1 KiB reserved by the
  driver (sm_80+) and rounds up to 128 B; limits of 64 warps and 32 blocks per SM.

When limits tie, `limited_by` names the first of ("waves", "blocks", "registers", "lds"): a kernel at the
hardware cap is not held back by its resources.
"""

from __future__ import annotations

from dataclasses import dataclass

from kerntailor.targets.spec import Target

_MAX_THREADS_PER_BLOCK = 1024
_NV_RESERVED_SMEM = 1024   # bytes the CUDA driver reserves per block on sm_80+
_NV_SMEM_GRANULE = 128     # shared-memory allocation granule on sm_8x (cuda_occupancy.h)
_NV_REG_GRANULE = 256      # registers per warp


@dataclass(frozen=True)
class Occupancy:
    """Resident work per CU (SM) for one kernel on one target."""

    target: str
    blocks_per_cu: int     # workgroups (thread blocks) resident per CU / SM; 0 if the kernel cannot launch
    waves_per_cu: int      # waves (AMD) or warps (NVIDIA) resident per CU / SM
    waves_per_simd: int    # AMD: the `; Occupancy` figure (0..8); NVIDIA: warps per sub-partition (0..16)
    max_waves_per_cu: int  # hardware cap: 32 waves per CU on CDNA, 64 warps per SM on NVIDIA
    limited_by: str        # "registers" | "lds" | "waves" | "blocks"

    @property
    def warps_per_sm(self) -> int:
        """NVIDIA wording of `waves_per_cu`."""
        return self.waves_per_cu

    @property
    def fraction(self) -> float:
        """Resident waves over the hardware cap (the CUDA "achieved occupancy" ceiling)."""
        return self.waves_per_cu / self.max_waves_per_cu if self.max_waves_per_cu else 0.0

    @property
    def fits(self) -> bool:
        return self.blocks_per_cu > 0


def _align(x: int, granule: int) -> int:
    return -(-x // granule) * granule


def _pick(limits: dict[str, int]) -> tuple[int, str]:
    """The smallest limit and its name; ties go to the first key (dict order is the priority)."""
    blocks = min(limits.values())
    return blocks, next(k for k, v in limits.items() if v == blocks)


def occupancy(target: Target, *, registers_per_thread: int, lds_bytes_per_block: int,
              threads_per_block: int) -> Occupancy:
    """Occupancy of a kernel using `registers_per_thread` (AMD: arch VGPRs + AGPRs; NVIDIA: registers),
    `lds_bytes_per_block` of LDS / shared memory and `threads_per_block` threads (num_warps x warp size)."""
    if threads_per_block <= 0 or registers_per_thread < 0 or lds_bytes_per_block < 0:
        raise ValueError(f"occupancy needs threads_per_block > 0 and non-negative registers/LDS, got "
                         f"{threads_per_block=}, {registers_per_thread=}, {lds_bytes_per_block=}")
    rule = _amd_occupancy if target.is_amd else _nvidia_occupancy
    return rule(target, registers_per_thread, lds_bytes_per_block, threads_per_block)


def _amd_occupancy(t: Target, vgprs: int, lds: int, threads: int) -> Occupancy:
    simds = t.simds_per_cu
    waves_per_wg = -(-threads // t.warp_size)
    max_waves_cu = t.max_waves_per_simd * simds

    if vgprs > t.max_registers_per_thread:
        simd_waves_regs = 0
    else:
        simd_waves_regs = min(t.max_waves_per_simd, t.registers_per_simd // max(_align(vgprs, t.register_granule),
                                                                               t.register_granule))
    wg_cap = max_waves_cu if waves_per_wg == 1 else min(max_waves_cu // waves_per_wg, t.max_blocks_per_cu)
    limits = {
        "waves": max_waves_cu // waves_per_wg if threads <= _MAX_THREADS_PER_BLOCK else 0,
        "blocks": wg_cap,
        "registers": simd_waves_regs * simds // waves_per_wg,
        "lds": (t.lds_per_cu // lds if lds else wg_cap) if lds <= t.lds_per_block else 0,
    }
    blocks, limited_by = _pick(limits)
    waves_cu = blocks * waves_per_wg
    return Occupancy(t.name, blocks, waves_cu, -(-waves_cu // simds), max_waves_cu, limited_by)


def _nvidia_occupancy(t: Target, regs: int, smem: int, threads: int) -> Occupancy:
    parts = t.simds_per_cu
    warps_per_block = -(-threads // t.warp_size)
    max_warps = t.max_waves_per_simd

    regs_per_warp = _align(regs * t.warp_size, _NV_REG_GRANULE)
    if regs > t.max_registers_per_thread or regs_per_warp * _align(warps_per_block, parts) > t.registers_per_simd:
        blocks_regs = 0
    elif regs_per_warp == 0:
        blocks_regs = t.max_blocks_per_cu
    else:
        warps_per_part = (t.registers_per_simd // parts) // regs_per_warp
        blocks_regs = warps_per_part * parts // warps_per_block

    smem_alloc = _align(smem + _NV_RESERVED_SMEM, _NV_SMEM_GRANULE)
    blocks_smem = t.lds_per_cu // smem_alloc if smem <= t.lds_per_block else 0
    limits = {
        "waves": max_warps // warps_per_block if threads <= _MAX_THREADS_PER_BLOCK else 0,
        "blocks": t.max_blocks_per_cu,
        "registers": blocks_regs,
        "lds": blocks_smem,
    }
    blocks, limited_by = _pick(limits)
    warps = blocks * warps_per_block
    return Occupancy(t.name, blocks, warps, -(-warps // parts), max_warps, limited_by)
