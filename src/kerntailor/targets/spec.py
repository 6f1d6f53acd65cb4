"""The Target type: frozen facts about one GPU. The table of instances lives in table.py."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MatrixInstr:
    """One matrix instruction family: `v_mfma_f32_16x16x16_bf16` (AMD) or `wgmma.m64nNk16` (NVIDIA)."""

    name: str
    in_dtype: str                 # "fp16", "bf16", "fp8", "tf32", "fp32", "i8"
    shape: tuple[int, int, int]   # (M, N, K) per instruction
    cycles: int | None = None     # issue cycles, where the vendor documents them


@dataclass(frozen=True)
class Target:
    """Frozen facts about one GPU, each with a source in `sources` (field name -> citation).

    Units: bytes, bytes/s, FLOP/s, MHz. `peak_flops` keys are dtype names ("fp64", "fp32", "tf32",
    "fp16", "bf16", "fp8"), dense (no sparsity); `vector_flops` is the non-matrix (SIMD/CUDA-core) rate.
    """

    name: str                       # canonical short name: "mi300x"
    display_name: str               # "AMD Instinct MI300X"
    vendor: str                     # "amd" | "nvidia"
    backend: str                    # Triton backend: "hip" | "cuda"
    arch: str                       # "gfx942" | "sm_90"
    aliases: tuple[str, ...]
    warp_size: int                  # 64 on AMD CDNA, 32 on NVIDIA
    compute_units: int              # CUs (AMD) or SMs (NVIDIA)
    simds_per_cu: int               # 4 on CDNA; 4 SM sub-partitions on NVIDIA
    clock_mhz: int                  # peak engine clock
    lds_per_cu: int                 # LDS / shared memory per CU or SM, bytes
    lds_per_block: int              # max per workgroup / thread block, bytes
    registers_per_simd: int         # AMD: VGPRs per lane per SIMD (512); NVIDIA: 32-bit regs per SM (65536)
    max_registers_per_thread: int   # AMD: 512 (arch+acc VGPRs); NVIDIA: 255
    register_granule: int           # allocation granule: AMD 8 VGPRs; NVIDIA 8 regs/thread (256/warp)
    max_waves_per_simd: int         # AMD: 8 waves per SIMD; NVIDIA: warps per SM (64)
    max_blocks_per_cu: int          # workgroups / blocks resident per CU or SM
    l2_bytes: int
    llc_bytes: int                  # Infinity Cache / last-level cache beyond L2 (0 if none)
    memory_bytes: int
    memory_bandwidth: float         # bytes/s, vendor peak
    peak_flops: tuple[tuple[str, float], ...]    # matrix-unit rates per dtype, FLOP/s
    vector_flops: tuple[tuple[str, float], ...]  # SIMD / CUDA-core rates per dtype, FLOP/s
    matrix_instrs: tuple[MatrixInstr, ...]
    fp8_dtypes: tuple[str, ...]     # torch names: ("float8_e4m3fnuz", "float8_e5m2fnuz") on gfx942
    sources: tuple[tuple[str, str], ...]

    @property
    def is_amd(self) -> bool:
        return self.vendor == "amd"

    @property
    def reuse_cache_bytes(self) -> int:
        """The cache a kernel can count on to re-read what any program read a moment before: L2 on NVIDIA (one
        L2 for all SMs); the larger of L2 and the memory-side last-level cache otherwise (MI300X: its 32 MiB L2 is
        4 MiB per XCD and the programs of one row land on several XCDs; the 256 MiB Infinity Cache serves all)."""
        return max(self.l2_bytes, self.llc_bytes)

    def peak(self, dtype: str, matrix: bool = True) -> float:
        """FLOP/s for `dtype` on the matrix units (matrix=True) or the vector units; 0.0 if none."""
        table = dict(self.peak_flops if matrix else self.vector_flops)
        if dtype in table:
            return table[dtype]
        # fall back to the other unit (e.g. fp32 matrix on a GPU without fp32 matrix instructions)
        return dict(self.vector_flops if matrix else self.peak_flops).get(dtype, 0.0)

    def source(self, field_name: str) -> str:
        return dict(self.sources).get(field_name, "")

    def gpu_target(self):
        """The triton.backends.compiler.GPUTarget to cross-compile for this GPU."""
        from triton.backends.compiler import GPUTarget

        arch: str | int = self.arch
        if self.backend == "cuda":
            arch = int(self.arch.removeprefix("sm_").rstrip("a"))
        return GPUTarget(self.backend, arch, self.warp_size)
