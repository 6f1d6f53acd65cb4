"""The targets table: seven GPUs, every number with a source.

Source marks follow /work/shared/reference/gpu-facts.md (collected 2026-11-29):
  [V] read in a primary source or reproduced on a machine; [S] secondary source (vendor spec sheet,
  well-known public figure); [U] recalled, not verified — check before relying on it.

Units: bytes, bytes/s, FLOP/s (dense, no sparsity), MHz. "GB" and "TB/s" from vendors are decimal; cache
and LDS sizes are binary (KiB/MiB), as torch and the ISA manuals report them.

Conventions worth knowing before reading a row:
- MI250X: one GCD is the device (ROCm exposes each of the two GCDs as its own GPU), so the row holds the
  per-GCD figures: 110 CUs, 1.6 TB/s, 8 MiB L2, 64 GB, and half of the whole-card compute peaks.
- Arch aliases map to one target each: gfx942 -> mi300x (not mi325x), gfx90a -> mi250x, gfx950 -> mi355x,
  sm_90 -> h200 (not h100), sm_80 -> a100.
- NVIDIA rows: `registers_per_simd` is 32-bit registers per SM, `max_waves_per_simd` is warps per SM,
  `simds_per_cu` is SM sub-partitions (the field names are AMD's; see spec.py).
- A dtype with no matrix rate (fp32 on NVIDIA) falls back to the vector rate in `Target.peak`.
"""

from __future__ import annotations

from kerntailor.targets.spec import MatrixInstr, Target

KiB = 1024
MiB = 1024 * 1024
GB = 10**9
TB = 10**12  # TB/s for bandwidth
TF = 10**12  # TFLOP/s

# --- citations used more than once -------------------------------------------------------------------
_FACTS = "gpu-facts.md"
_ROCM = "ROCm docs gpu-arch-specs.rst / mi300.md"
_ROCM250 = "ROCm docs gpu-arch-specs.rst / mi250.md"
_LLVM_WG = "LLVM AMDGPUBaseInfo.cpp getMaxWorkGroupsPerCU: 16 barriers per CU for multi-wave workgroups [V]"
_AMD_REGS = f"{_FACTS}: 512 VGPRs per lane per SIMD (arch+AGPR unified), granule 8, 4 SIMDs per CU [V]"
_CUDA_OCC = "CUDA cuda_occupancy.h: 256-register/warp granule, 4 sub-partitions [V]"
_MEASURED_H200 = "measured H200 2026-11-29 torch 2.11"


def _sources(d: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(d.items())


# --- matrix instructions -------------------------------------------------------------------------------

def _mfma(name: str, dtype: str, m: int, n: int, k: int, cycles: int | None = None) -> MatrixInstr:
    return MatrixInstr(name=name, in_dtype=dtype, shape=(m, n, k), cycles=cycles)


_CDNA3_FP16_BF16 = (
    _mfma("v_mfma_f32_32x32x8_f16", "fp16", 32, 32, 8, 32),
    _mfma("v_mfma_f32_16x16x16_f16", "fp16", 16, 16, 16, 16),
    _mfma("v_mfma_f32_32x32x8_bf16", "bf16", 32, 32, 8, 32),
    _mfma("v_mfma_f32_16x16x16_bf16", "bf16", 16, 16, 16, 16),
)
_CDNA3_FP8 = (
    _mfma("v_mfma_f32_16x16x32_fp8_fp8", "fp8", 16, 16, 32),
    _mfma("v_mfma_f32_32x32x16_fp8_fp8", "fp8", 32, 32, 16),
)
_CDNA_FP32 = (
    _mfma("v_mfma_f32_32x32x2_f32", "fp32", 32, 32, 2),
    _mfma("v_mfma_f32_16x16x4_f32", "fp32", 16, 16, 4),
)
CDNA3_INSTRS = _CDNA3_FP16_BF16 + _CDNA3_FP8 + (
    _mfma("v_mfma_f32_32x32x4_xf32", "tf32", 32, 32, 4),
    _mfma("v_mfma_f32_16x16x8_xf32", "tf32", 16, 16, 8),
) + _CDNA_FP32
CDNA4_INSTRS = _CDNA3_FP16_BF16 + (
    _mfma("v_mfma_f32_16x16x32_f16", "fp16", 16, 16, 32),
    _mfma("v_mfma_f32_32x32x16_f16", "fp16", 32, 32, 16),
    _mfma("v_mfma_f32_16x16x32_bf16", "bf16", 16, 16, 32),
    _mfma("v_mfma_f32_32x32x16_bf16", "bf16", 32, 32, 16),
) + _CDNA3_FP8 + _CDNA_FP32  # no xf32 on gfx950
CDNA2_INSTRS = (
    # cycles derived from the whole-card 383 TF fp16 peak (880 matrix cores x 1.7 GHz) [U]
    _mfma("v_mfma_f32_32x32x8f16", "fp16", 32, 32, 8, 64),
    _mfma("v_mfma_f32_16x16x16f16", "fp16", 16, 16, 16, 32),
    _mfma("v_mfma_f32_32x32x8bf16_1k", "bf16", 32, 32, 8, 64),
    _mfma("v_mfma_f32_16x16x16bf16_1k", "bf16", 16, 16, 16, 32),
) + _CDNA_FP32
# wgmma: one warpgroup (4 warps), M = 64, N = 8..256 in steps of 8; the shape holds the smallest N.
HOPPER_INSTRS = (
    _mfma("wgmma.mma_async.m64nNk16.f32.f16.f16 (N=8..256)", "fp16", 64, 8, 16),
    _mfma("wgmma.mma_async.m64nNk16.f32.bf16.bf16 (N=8..256)", "bf16", 64, 8, 16),
    _mfma("wgmma.mma_async.m64nNk8.f32.tf32.tf32 (N=8..256)", "tf32", 64, 8, 8),
    _mfma("wgmma.mma_async.m64nNk32.f32.e4m3.e4m3 (N=8..256; also e5m2)", "fp8", 64, 8, 32),
)
AMPERE_INSTRS = (
    _mfma("mma.sync.aligned.m16n8k16.f32.f16.f16.f32", "fp16", 16, 8, 16),
    _mfma("mma.sync.aligned.m16n8k16.f32.bf16.bf16.f32", "bf16", 16, 8, 16),
    _mfma("mma.sync.aligned.m16n8k8.f32.tf32.tf32.f32", "tf32", 16, 8, 8),
)

# --- AMD -----------------------------------------------------------------------------------------------

_AMD_COMMON_SOURCES = {
    "warp_size": f"{_FACTS}: wave64 on CDNA [V]",
    "simds_per_cu": _AMD_REGS,
    "registers_per_simd": _AMD_REGS,
    "max_registers_per_thread": _AMD_REGS,
    "register_granule": _AMD_REGS,
    "max_waves_per_simd": f"{_FACTS}: 8 waves per SIMD [V]; LLVM getMaxWavesPerEU = 8 on gfx90a+ [V]",
    "max_blocks_per_cu": _LLVM_WG,
}


def _amd(**kw) -> dict:
    base = dict(vendor="amd", backend="hip", warp_size=64, simds_per_cu=4, registers_per_simd=512,
                max_registers_per_thread=512, register_granule=8, max_waves_per_simd=8, max_blocks_per_cu=16)
    base.update(kw)
    return base


_MI300_PEAK = (("fp64", 163.4 * TF), ("fp32", 163.4 * TF), ("tf32", 653.7 * TF),
               ("fp16", 1307.4 * TF), ("bf16", 1307.4 * TF), ("fp8", 2614.9 * TF))
_MI300_VECTOR = (("fp64", 81.7 * TF), ("fp32", 163.4 * TF))

MI300X = Target(
    name="mi300x", display_name="AMD Instinct MI300X", arch="gfx942",
    aliases=("mi300x", "mi300", "gfx942"),
    **_amd(compute_units=304, clock_mhz=2100, lds_per_cu=64 * KiB, lds_per_block=64 * KiB,
           l2_bytes=32 * MiB, llc_bytes=256 * MiB, memory_bytes=192 * GB, memory_bandwidth=5.3 * TB),
    peak_flops=_MI300_PEAK, vector_flops=_MI300_VECTOR, matrix_instrs=CDNA3_INSTRS,
    fp8_dtypes=("float8_e4m3fnuz", "float8_e5m2fnuz"),
    sources=_sources({
        **_AMD_COMMON_SOURCES,
        "compute_units": f"{_ROCM}: 304 CUs (38 per XCD x 8) [V]",
        "clock_mhz": f"{_FACTS}: 2100 MHz peak engine clock [V]",
        "lds_per_cu": f"{_ROCM}: 64 KiB LDS per CU [V]",
        "lds_per_block": f"{_ROCM}: 64 KiB LDS per workgroup [V]",
        "l2_bytes": f"{_ROCM}: 32 MiB L2 (4 MiB per XCD) [V]",
        "llc_bytes": f"{_ROCM}: 256 MiB Infinity Cache [V]",
        "memory_bytes": f"{_ROCM}: 192 GB HBM3 [V]",
        "memory_bandwidth": f"{_ROCM}: 5.3 TB/s [V]",
        "peak_flops.fp64": "AMD MI300X spec sheet: 163.4 TF fp64 matrix [U] recalled, unverified",
        "peak_flops.fp32": f"{_ROCM}: 163.4 TF fp32 matrix [V]",
        "peak_flops.tf32": f"{_ROCM}: 653.7 TF tf32 (xf32) [V]",
        "peak_flops.fp16": f"{_ROCM}: 1307.4 TF dense [V]",
        "peak_flops.bf16": f"{_ROCM}: 1307.4 TF dense [V]",
        "peak_flops.fp8": f"{_ROCM}: 2614.9 TF dense (e4m3fnuz/e5m2fnuz) [V]",
        "vector_flops.fp64": "AMD MI300X spec sheet: 81.7 TF fp64 vector [U] recalled, unverified",
        "vector_flops.fp32": f"{_ROCM}: 163.4 TF fp32 vector [V]",
        "matrix_instrs": f"{_FACTS} (AMD matrix-core blog, CDNA3 table) [V]; fp32/xf32 names [U]",
        "fp8_dtypes": f"{_FACTS}: gfx942 fp8 is e4m3fnuz/e5m2fnuz [V]",
    }),
)

MI325X = Target(
    name="mi325x", display_name="AMD Instinct MI325X", arch="gfx942",
    aliases=("mi325x", "mi325"),
    **_amd(compute_units=304, clock_mhz=2100, lds_per_cu=64 * KiB, lds_per_block=64 * KiB,
           l2_bytes=32 * MiB, llc_bytes=256 * MiB, memory_bytes=256 * GB, memory_bandwidth=6.0 * TB),
    peak_flops=_MI300_PEAK, vector_flops=_MI300_VECTOR, matrix_instrs=CDNA3_INSTRS,
    fp8_dtypes=("float8_e4m3fnuz", "float8_e5m2fnuz"),
    sources=_sources({
        **_AMD_COMMON_SOURCES,
        "compute_units": "AMD MI325X spec sheet: 304 CUs [S]",
        "clock_mhz": "AMD MI325X spec sheet: 2100 MHz, same die as MI300X [S]",
        "lds_per_cu": f"same gfx942 CU as MI300X; {_ROCM}: 64 KiB [S]",
        "lds_per_block": f"same gfx942 CU as MI300X; {_ROCM}: 64 KiB [S]",
        "l2_bytes": "same gfx942 die as MI300X: 32 MiB L2 [S]",
        "llc_bytes": "AMD MI325X spec sheet: 256 MiB Infinity Cache [S]",
        "memory_bytes": "AMD MI325X spec sheet: 256 GB HBM3E [S]",
        "memory_bandwidth": "AMD MI325X spec sheet: 6 TB/s [S]",
        **{f"peak_flops.{k}": "AMD MI325X spec sheet: same compute peaks as MI300X [S]" for k, _ in _MI300_PEAK},
        **{f"vector_flops.{k}": "AMD MI325X spec sheet: same compute peaks as MI300X [S]"
           for k, _ in _MI300_VECTOR},
        "matrix_instrs": f"gfx942, as MI300X: {_FACTS} (AMD matrix-core blog) [V]",
        "fp8_dtypes": f"gfx942, as MI300X: {_FACTS} [V]",
    }),
)

_MI355_PEAK = (("fp64", 78.6 * TF), ("fp32", 157.3 * TF), ("fp16", 2516.6 * TF), ("bf16", 2516.6 * TF),
               ("fp8", 5033.2 * TF))

MI355X = Target(
    name="mi355x", display_name="AMD Instinct MI355X", arch="gfx950",
    aliases=("mi355x", "mi355", "gfx950"),
    **_amd(compute_units=256, clock_mhz=2400, lds_per_cu=160 * KiB, lds_per_block=160 * KiB,
           l2_bytes=32 * MiB, llc_bytes=256 * MiB, memory_bytes=288 * GB, memory_bandwidth=8.0 * TB),
    peak_flops=_MI355_PEAK, vector_flops=(("fp64", 78.6 * TF), ("fp32", 157.3 * TF)),
    matrix_instrs=CDNA4_INSTRS, fp8_dtypes=("float8_e4m3fn", "float8_e5m2"),
    sources=_sources({
        **_AMD_COMMON_SOURCES,
        "compute_units": f"{_ROCM}: 256 CUs (32 per XCD x 8) [V]",
        "clock_mhz": "AMD MI355X spec sheet: 2400 MHz peak engine clock [S]",
        "lds_per_cu": f"{_ROCM}: 160 KiB LDS per CU [V]",
        "lds_per_block": "160 KiB per workgroup, as LLVM's gfx950 addressable LDS [U] recalled, unverified",
        "l2_bytes": f"{_ROCM}: 32 MiB L2 [V]",
        "llc_bytes": f"{_ROCM}: 256 MiB Infinity Cache [V]",
        "memory_bytes": f"{_FACTS}: 288 GB HBM3E [S]",
        "memory_bandwidth": f"{_FACTS}: 8 TB/s [S]",
        "peak_flops.fp64": "AMD MI355X spec sheet: 78.6 TF fp64 [U] recalled, unverified",
        "peak_flops.fp32": f"{_FACTS}: 157.3 TF fp32 matrix [S]",
        "peak_flops.fp16": f"{_FACTS}: 2.5 PF dense [S]; 2516.6 = 256 CUs x 4096 FLOP/clk x 2.4 GHz",
        "peak_flops.bf16": f"{_FACTS}: 2.5 PF dense [S]; 2516.6 = 256 CUs x 4096 FLOP/clk x 2.4 GHz",
        "peak_flops.fp8": f"{_FACTS}: 5 PF dense, OCP e4m3fn/e5m2 [S]; 5033.2 = 2 x fp16 rate",
        "vector_flops.fp64": "AMD MI355X spec sheet: 78.6 TF fp64 vector [U] recalled, unverified",
        "vector_flops.fp32": "AMD MI355X spec sheet: 157.3 TF fp32 vector [U] recalled, unverified",
        "matrix_instrs": f"{_FACTS} (AMD matrix-core blog, CDNA4 table) [V]; no xf32 on gfx950 [S]",
        "fp8_dtypes": f"{_FACTS}: gfx950 fp8 is OCP e4m3fn/e5m2 [S]",
    }),
)

_MI250_GCD = "per GCD = half of the whole-card figure"
MI250X = Target(
    name="mi250x", display_name="AMD Instinct MI250X (one GCD)", arch="gfx90a",
    aliases=("mi250x", "mi250", "gfx90a"),
    **_amd(compute_units=110, clock_mhz=1700, lds_per_cu=64 * KiB, lds_per_block=64 * KiB,
           l2_bytes=8 * MiB, llc_bytes=0, memory_bytes=64 * GB, memory_bandwidth=1.6 * TB),
    peak_flops=(("fp64", 47.9 * TF), ("fp32", 47.9 * TF), ("fp16", 191.5 * TF), ("bf16", 191.5 * TF)),
    vector_flops=(("fp64", 23.9 * TF), ("fp32", 23.9 * TF)),
    matrix_instrs=CDNA2_INSTRS, fp8_dtypes=(),
    sources=_sources({
        **_AMD_COMMON_SOURCES,
        "compute_units": f"{_ROCM250}: 220 CUs, 110 per GCD; each GCD is its own device [V]",
        "clock_mhz": "AMD MI250X spec sheet: 1700 MHz peak engine clock [U] recalled, unverified",
        "lds_per_cu": f"{_ROCM250}: 64 KiB LDS per CU [V]",
        "lds_per_block": f"{_ROCM250}: 64 KiB LDS per workgroup [V]",
        "l2_bytes": f"{_ROCM250}: 16 MiB L2, 8 MiB per GCD [V]",
        "llc_bytes": f"{_ROCM250}: no Infinity Cache [V]",
        "memory_bytes": f"{_ROCM250}: 128 GB HBM2e, 64 GB per GCD [V]",
        "memory_bandwidth": f"{_ROCM250}: 3.2 TB/s, 1.6 TB/s per GCD [V]",
        "peak_flops.fp64": f"{_FACTS}: 95.7 TF whole card, {_MI250_GCD} [U]",
        "peak_flops.fp32": f"{_FACTS}: 95.7 TF fp32 matrix whole card, {_MI250_GCD} [U]",
        "peak_flops.fp16": f"{_FACTS}: 383 TF whole card, {_MI250_GCD} [U]",
        "peak_flops.bf16": f"{_FACTS}: 383 TF whole card (bf16_1k), {_MI250_GCD} [U]",
        "vector_flops.fp64": f"AMD MI250X spec sheet: 47.9 TF whole card, {_MI250_GCD} [U]",
        "vector_flops.fp32": f"{_FACTS}: 47.9 TF fp32 vector whole card, {_MI250_GCD} [U]",
        "matrix_instrs": f"{_FACTS}: CDNA2 v_mfma_f32_32x32x8f16, bf16_1k [V]; cycles derived from peak [U]",
        "fp8_dtypes": f"{_FACTS}: no fp8 on gfx90a [V]",
    }),
)

# --- NVIDIA --------------------------------------------------------------------------------------------

_HOPPER_PEAK = (("fp64", 67 * TF), ("tf32", 494.7 * TF), ("fp16", 989.4 * TF), ("bf16", 989.4 * TF),
                ("fp8", 1979 * TF))
_HOPPER_VECTOR = (("fp64", 34 * TF), ("fp32", 67 * TF))


def _hopper_sources(**kw: str) -> tuple[tuple[str, str], ...]:
    return _sources({
        "warp_size": "warp 32 on every NVIDIA GPU [V]",
        "simds_per_cu": f"{_CUDA_OCC}; 4 per SM on sm_90 [U]",
        "clock_mhz": "NVIDIA H100 SXM max boost 1980 MHz [U] recalled, unverified",
        "registers_per_simd": f"{_FACTS}: 64K x 32-bit registers per SM [V]",
        "max_registers_per_thread": f"{_FACTS}: <= 255 per thread [V]",
        "register_granule": _CUDA_OCC,
        "max_waves_per_simd": f"{_FACTS}: 64 warps per SM [V]",
        "max_blocks_per_cu": f"{_FACTS}: 32 blocks per SM [V]",
        "lds_per_cu": f"{_FACTS}: 228 KB shared per SM [V] (NVIDIA Hopper tuning guide)",
        "lds_per_block": f"{_FACTS}: 227 KB shared per block [V] (NVIDIA Hopper tuning guide)",
        "llc_bytes": f"{_FACTS}: no cache beyond L2 [V]",
        "peak_flops.fp64": "NVIDIA H100 SXM datasheet: 67 TF fp64 tensor [U] recalled, unverified",
        "peak_flops.tf32": f"{_FACTS}: 494.7 TF dense [U]; cuBLAS tf32 360 TF {_MEASURED_H200}",
        "peak_flops.fp16": f"{_FACTS}: 989 TF dense [U]",
        "peak_flops.bf16": f"{_FACTS}: 989 TF dense [U]; cuBLAS bf16 680-818 TF {_MEASURED_H200}",
        "peak_flops.fp8": f"{_FACTS}: 1979 TF dense [S]",
        "vector_flops.fp64": "NVIDIA H100 SXM datasheet: 34 TF fp64 [U] recalled, unverified",
        "vector_flops.fp32": f"{_FACTS}: 67 TF [U]; cuBLAS fp32 51 TF {_MEASURED_H200}",
        "matrix_instrs": f"{_FACTS}: wgmma.mma_async (HGMMA/QGMMA) [V]; PTX ISA shapes m64nNk16/k8/k32 [S]",
        "fp8_dtypes": "sm_90 fp8 is OCP e4m3fn/e5m2 (PTX ISA) [S]",
        **kw,
    })


def _nvidia(**kw) -> dict:
    base = dict(vendor="nvidia", backend="cuda", warp_size=32, simds_per_cu=4, registers_per_simd=65536,
                max_registers_per_thread=255, register_granule=8, max_waves_per_simd=64, max_blocks_per_cu=32)
    base.update(kw)
    return base


H100 = Target(
    name="h100", display_name="NVIDIA H100 SXM5 80GB", arch="sm_90",
    aliases=("h100", "h100-sxm", "h100-sxm5", "h100-80gb"),
    **_nvidia(compute_units=132, clock_mhz=1980, lds_per_cu=228 * KiB, lds_per_block=227 * KiB,
              l2_bytes=50 * MiB, llc_bytes=0, memory_bytes=80 * GB, memory_bandwidth=3.35 * TB),
    peak_flops=_HOPPER_PEAK, vector_flops=_HOPPER_VECTOR, matrix_instrs=HOPPER_INSTRS,
    fp8_dtypes=("float8_e4m3fn", "float8_e5m2"),
    sources=_hopper_sources(
        compute_units="NVIDIA H100 SXM5 datasheet: 132 SMs [S] (torch reports 132 on H200 [V])",
        l2_bytes=f"{_FACTS}: 50 MB [V]; stored as 50 MiB, as torch reports L2 [U]",
        memory_bytes="NVIDIA H100 SXM5 datasheet: 80 GB HBM3 [S]",
        memory_bandwidth=f"{_FACTS}: 3.35 TB/s vendor peak [S]",
    ),
)

H200 = Target(
    name="h200", display_name="NVIDIA H200 SXM 141GB", arch="sm_90",
    aliases=("h200", "h200-sxm", "sm_90", "sm_90a"),
    **_nvidia(compute_units=132, clock_mhz=1980, lds_per_cu=228 * KiB, lds_per_block=227 * KiB,
              l2_bytes=60 * MiB, llc_bytes=0, memory_bytes=141 * GB, memory_bandwidth=4.8 * TB),
    peak_flops=_HOPPER_PEAK, vector_flops=_HOPPER_VECTOR, matrix_instrs=HOPPER_INSTRS,
    fp8_dtypes=("float8_e4m3fn", "float8_e5m2"),
    sources=_hopper_sources(
        compute_units=f"{_FACTS}: 132 SMs, torch reports 132 on H200 [V]",
        l2_bytes=f"{_FACTS}: 60 MB as torch reports it on H200 [V]",
        memory_bytes=f"{_FACTS}: 141 GB HBM3e [S]",
        memory_bandwidth=f"{_FACTS}: 4.8 TB/s vendor peak [S]; 4.27 TB/s copy {_MEASURED_H200}",
    ),
)

_A100 = "NVIDIA A100 datasheet / Ampere tuning guide"
A100 = Target(
    name="a100", display_name="NVIDIA A100 SXM4 80GB", arch="sm_80",
    aliases=("a100", "a100-sxm", "a100-sxm4", "a100-80gb", "a100-sxm4-80gb", "sm_80"),
    **_nvidia(compute_units=108, clock_mhz=1410, lds_per_cu=164 * KiB, lds_per_block=163 * KiB,
              l2_bytes=40 * MiB, llc_bytes=0, memory_bytes=80 * GB, memory_bandwidth=2039 * GB),
    peak_flops=(("fp64", 19.5 * TF), ("tf32", 156 * TF), ("fp16", 312 * TF), ("bf16", 312 * TF)),
    vector_flops=(("fp64", 9.7 * TF), ("fp32", 19.5 * TF)),
    matrix_instrs=AMPERE_INSTRS, fp8_dtypes=(),
    sources=_sources({
        "warp_size": "warp 32 on every NVIDIA GPU [V]",
        "compute_units": f"{_A100}: 108 SMs [S]",
        "simds_per_cu": _CUDA_OCC,
        "clock_mhz": f"{_A100}: 1410 MHz boost [S]",
        "lds_per_cu": f"{_A100}: 164 KB shared per SM [S]",
        "lds_per_block": f"{_A100}: 163 KB shared per block [S]",
        "registers_per_simd": f"{_A100}: 64K x 32-bit registers per SM [S]",
        "max_registers_per_thread": f"{_A100}: 255 per thread [S]",
        "register_granule": _CUDA_OCC,
        "max_waves_per_simd": f"{_A100}: 64 warps per SM [S]",
        "max_blocks_per_cu": "CUDA cuda_occupancy.h: 32 blocks per SM on sm_80 [V]",
        "l2_bytes": f"{_A100}: 40 MB L2 [S]; stored as 40 MiB, as torch reports L2 [U]",
        "llc_bytes": "no cache beyond L2 [S]",
        "memory_bytes": f"{_A100}: 80 GB HBM2e [S]",
        "memory_bandwidth": f"{_A100}: 2039 GB/s for SXM4 80GB (1555 GB/s for 40GB) [S]",
        "peak_flops.fp64": f"{_A100}: 19.5 TF fp64 tensor [S]",
        "peak_flops.tf32": f"{_A100}: 156 TF tf32 dense [S]",
        "peak_flops.fp16": f"{_A100}: 312 TF dense [S]",
        "peak_flops.bf16": f"{_A100}: 312 TF dense [S]",
        "vector_flops.fp64": f"{_A100}: 9.7 TF fp64 [S]",
        "vector_flops.fp32": f"{_A100}: 19.5 TF fp32 [S]",
        "matrix_instrs": "PTX ISA: mma.sync m16n8k16 (fp16/bf16), m16n8k8 (tf32) on sm_80 [S]",
        "fp8_dtypes": "no fp8 tensor cores on sm_80 [S]",
    }),
)

# Stable order: AMD first (MI300X is the primary target), then NVIDIA, newest first within a family.
TARGETS: tuple[Target, ...] = (MI300X, MI325X, MI355X, MI250X, H100, H200, A100)
