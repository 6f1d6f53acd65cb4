"""Targets table, lookup, detection and occupancy. Unit tier: no GPU, no interpreter."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kerntailor.errors import TargetError
from kerntailor.targets import (
    TARGETS,
    MatrixInstr,
    Target,
    all_targets,
    detect_local_target,
    get_target,
    match_device,
    occupancy,
    resolve_target,
)
from kerntailor.targets.show import matrix_summary, show_targets

NAMES = ("mi300x", "mi325x", "mi355x", "mi250x", "h100", "h200", "a100")
NUMERIC_FIELDS = [f.name for f in dataclasses.fields(Target) if f.type in ("int", "float")]


# --- the table -----------------------------------------------------------------------------------------

def test_all_seven_targets_in_stable_order():
    assert tuple(t.name for t in TARGETS) == NAMES
    assert all_targets() == TARGETS


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_every_number_has_a_source(target):
    assert len(NUMERIC_FIELDS) >= 15
    for name in NUMERIC_FIELDS:
        assert target.source(name).strip(), f"{target.name}.{name} has no source"
    for table in ("peak_flops", "vector_flops"):
        for dtype, rate in getattr(target, table):
            assert rate > 0, f"{target.name}.{table}.{dtype}"
            assert target.source(f"{table}.{dtype}").strip(), f"{target.name}.{table}.{dtype} has no source"
    assert target.source("matrix_instrs") and target.source("fp8_dtypes")


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_sources_name_real_fields_and_carry_a_mark(target):
    fields = {f.name for f in dataclasses.fields(Target)}
    rates = {f"{table}.{k}" for table in ("peak_flops", "vector_flops") for k, _ in getattr(target, table)}
    for key, text in target.sources:
        assert key in fields or key in rates, f"{target.name}: source for unknown field {key!r}"
        assert any(mark in text for mark in ("[V]", "[S]", "[U]", "measured")), f"{target.name}.{key}: {text}"


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_facts_are_consistent(target):
    assert target.vendor in ("amd", "nvidia")
    assert target.backend == ("hip" if target.is_amd else "cuda")
    assert target.warp_size == (64 if target.is_amd else 32)
    assert target.lds_per_block <= target.lds_per_cu
    assert target.peak("fp32") > 0 and target.peak("bf16") > 0 and target.peak("fp16") > 0
    assert target.peak("bf16") > target.peak("fp32")  # matrix units beat the vector rate
    assert all(isinstance(m, MatrixInstr) and len(m.shape) == 3 for m in target.matrix_instrs)
    assert {"fp16", "bf16"} <= {m.in_dtype for m in target.matrix_instrs}
    assert ("fp8" in dict(target.peak_flops)) == bool(target.fp8_dtypes)


def test_headline_numbers_match_gpu_facts():
    mi300x, mi250x, h200 = get_target("mi300x"), get_target("mi250x"), get_target("h200")
    assert (mi300x.compute_units, mi300x.lds_per_cu, mi300x.l2_bytes) == (304, 65536, 32 * 2**20)
    assert mi300x.memory_bandwidth == pytest.approx(5.3e12)
    assert mi300x.peak("fp16") == pytest.approx(1307.4e12) and mi300x.peak("fp8") == pytest.approx(2614.9e12)
    # MI250X is one GCD
    assert (mi250x.compute_units, mi250x.l2_bytes) == (110, 8 * 2**20)
    assert mi250x.memory_bandwidth == pytest.approx(1.6e12)
    assert "GCD" in mi250x.display_name
    # H200: vendor bandwidth, with the measured copy rate in its source
    assert h200.memory_bandwidth == pytest.approx(4.8e12) and "4.27" in h200.source("memory_bandwidth")
    assert h200.l2_bytes == 60 * 2**20 and h200.compute_units == 132
    assert get_target("mi355x").lds_per_cu == 160 * 1024


def test_fp8_dtypes_per_arch():
    assert get_target("mi300x").fp8_dtypes == ("float8_e4m3fnuz", "float8_e5m2fnuz")
    assert get_target("mi325x").fp8_dtypes == ("float8_e4m3fnuz", "float8_e5m2fnuz")
    for name in ("mi355x", "h100", "h200"):
        assert get_target(name).fp8_dtypes == ("float8_e4m3fn", "float8_e5m2")
    assert get_target("mi250x").fp8_dtypes == () and get_target("a100").fp8_dtypes == ()


def test_fp8_dtypes_are_torch_dtypes():
    torch = pytest.importorskip("torch")
    for t in TARGETS:
        for name in t.fp8_dtypes:
            assert isinstance(getattr(torch, name), torch.dtype)


def test_gpu_target():
    pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget

    assert get_target("mi300x").gpu_target() == GPUTarget("hip", "gfx942", 64)
    assert get_target("mi355x").gpu_target() == GPUTarget("hip", "gfx950", 64)
    assert get_target("h200").gpu_target() == GPUTarget("cuda", 90, 32)
    assert get_target("h100").gpu_target() == GPUTarget("cuda", 90, 32)
    assert get_target("a100").gpu_target() == GPUTarget("cuda", 80, 32)


# --- lookup --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias, name", [
    ("mi300x", "mi300x"), ("MI300X", "mi300x"), ("mi300", "mi300x"), ("gfx942", "mi300x"),
    ("AMD Instinct MI300X", "mi300x"), ("mi-300x", "mi300x"), ("MI325X", "mi325x"),
    ("gfx950", "mi355x"), ("MI355X", "mi355x"), ("gfx90a", "mi250x"), ("mi250", "mi250x"),
    ("h100-sxm", "h100"), ("H100_SXM5", "h100"), ("NVIDIA H100", "h100"),
    ("h200", "h200"), ("sm_90", "h200"), ("SM90", "h200"), ("sm_90a", "h200"),
    ("a100", "a100"), ("A100-SXM4-80GB", "a100"), ("sm_80", "a100"), (" a100 ", "a100"),
])
def test_aliases_resolve(alias, name):
    assert get_target(alias).name == name
    assert resolve_target(alias).name == name


def test_every_alias_maps_to_its_own_target():
    for t in TARGETS:
        for alias in (t.name, *t.aliases):
            assert get_target(alias) is t
            assert get_target(alias.upper()) is t


def test_unknown_target_raises_a_helpful_one_line_error():
    with pytest.raises(TargetError) as exc:
        get_target("mi400x")
    message = str(exc.value)
    assert "\n" not in message and "mi400x" in message
    for name in NAMES:
        assert name in message


def test_local_is_none_on_a_machine_without_a_gpu():
    assert detect_local_target() is None
    with pytest.raises(TargetError, match="no known GPU"):
        resolve_target("local")
    with pytest.raises(TargetError):
        resolve_target("LOCAL")


def test_detection_never_raises(monkeypatch):
    from kerntailor.targets import lookup

    def broken():
        raise RuntimeError("driver exploded")

    monkeypatch.setattr(lookup, "_local_device", broken)
    assert detect_local_target() is None
    monkeypatch.setattr(lookup, "_local_device", lambda: ("NVIDIA H100 80GB HBM3", "sm_90", 80 * 10**9))
    assert detect_local_target().name == "h100"
    assert resolve_target("local").name == "h100"


def test_resolve_accepts_a_target():
    t = get_target("h200")
    assert resolve_target(t) is t


@pytest.mark.parametrize("name, arch, memory, expected", [
    ("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 192 * 10**9, "mi300x"),
    ("AMD Instinct MI325X", "gfx942:sramecc+:xnack-", 256 * 10**9, "mi325x"),
    ("", "gfx942:sramecc+:xnack-", 192 * 10**9, "mi300x"),         # ROCm sometimes gives no name
    ("", "gfx942:sramecc+:xnack-", 256 * 10**9, "mi325x"),
    ("AMD Instinct MI250X/MI250", "gfx90a:sramecc+:xnack-", 64 * 10**9, "mi250x"),
    ("AMD Instinct MI355X", "gfx950:sramecc+:xnack-", 288 * 10**9, "mi355x"),
    ("NVIDIA H200", "sm_90", 141 * 10**9, "h200"),
    ("NVIDIA H100 80GB HBM3", "sm_90", 80 * 10**9, "h100"),
    ("NVIDIA GH200 480GB", "sm_90", 96 * 10**9, "h200"),
    ("NVIDIA A100-SXM4-80GB", "sm_80", 80 * 10**9, "a100"),
    ("NVIDIA A100-SXM4-40GB", "sm_80", 40 * 10**9, "a100"),
    ("NVIDIA Hopper Engineering Sample", "sm_90", 0, "h200"),  # unknown name: the arch alias decides
    ("NVIDIA RTX A1000", "sm_86", 0, None),
    ("NVIDIA GeForce RTX 4090", "sm_89", 0, None),
    ("AMD Radeon RX 7900 XTX", "gfx1100", 0, None),
])
def test_match_device(name, arch, memory, expected):
    t = match_device(name, arch=arch, total_memory=memory)
    assert (t.name if t else None) == expected


# --- occupancy -----------------------------------------------------------------------------------------

def _occ(name, regs, lds, threads):
    return occupancy(get_target(name), registers_per_thread=regs, lds_bytes_per_block=lds,
                     threads_per_block=threads)


def test_amd_300_vgprs_is_occupancy_1():
    # gpu-facts.md: a kernel with 300 total VGPRs reports "; Occupancy: 1" (align 304; 512 // 304 = 1)
    o = _occ("mi300x", 300, 0, 256)
    assert (o.waves_per_simd, o.blocks_per_cu, o.waves_per_cu, o.limited_by) == (1, 1, 4, "registers")


def test_amd_measured_gemm_tile():
    # gpu-facts.md, measured: 128x128x64 fp16 GEMM, 4 warps on gfx942: 328 VGPRs, 16 KiB LDS -> 1 wave/SIMD
    o = _occ("mi300x", 328, 16 * 1024, 4 * 64)
    assert (o.waves_per_simd, o.blocks_per_cu, o.limited_by) == (1, 1, "registers")


def test_amd_128_vgprs_is_occupancy_4():
    o = _occ("mi300x", 128, 0, 256)  # 512 // 128 = 4 waves per SIMD = 16 per CU = 4 workgroups of 4
    assert (o.waves_per_simd, o.blocks_per_cu, o.limited_by) == (4, 4, "registers")
    assert _occ("mi300x", 121, 0, 256).waves_per_simd == 4   # 121 rounds up to 128
    assert _occ("mi300x", 129, 0, 256).waves_per_simd == 3   # 136: 512 // 136 = 3


def test_amd_64k_lds_workgroup_is_one_per_cu():
    o = _occ("mi300x", 64, 64 * 1024, 256)
    assert (o.blocks_per_cu, o.waves_per_simd, o.limited_by) == (1, 1, "lds")
    o = _occ("mi300x", 64, 16 * 1024, 256)  # measured-facts GEMM tile: 16 KiB -> 4 workgroups
    assert (o.blocks_per_cu, o.waves_per_simd, o.limited_by) == (4, 4, "lds")
    # the same 64 KiB workgroup fits twice in gfx950's 160 KiB
    assert _occ("mi355x", 64, 64 * 1024, 256).blocks_per_cu == 2


def test_amd_lds_over_the_limit_does_not_launch():
    o = _occ("mi300x", 64, 64 * 1024 + 1, 256)
    assert (o.blocks_per_cu, o.waves_per_cu, o.limited_by, o.fits) == (0, 0, "lds", False)


def test_amd_wave_and_barrier_caps():
    o = _occ("mi300x", 32, 0, 256)  # 8 waves per SIMD allowed by registers: 32 waves = 8 workgroups of 4
    assert (o.waves_per_simd, o.blocks_per_cu, o.limited_by, o.fraction) == (8, 8, "waves", 1.0)
    o = _occ("mi300x", 32, 0, 128)  # 2-wave workgroups: 16 barriers cap it at 16 workgroups = 32 waves
    assert (o.blocks_per_cu, o.waves_per_simd, o.limited_by) == (16, 8, "waves")
    o = _occ("mi300x", 32, 0, 64)   # single-wave workgroups need no barrier: 32 per CU
    assert (o.blocks_per_cu, o.waves_per_simd) == (32, 8)


def test_nvidia_255_registers_128_threads():
    # 255 -> 256 regs/thread = 8192 per warp; 16384 per sub-partition -> 2 warps each, 8 per SM = 2 blocks
    o = _occ("h100", 255, 0, 128)
    assert (o.blocks_per_cu, o.warps_per_sm, o.limited_by) == (2, 8, "registers")


def test_nvidia_32_registers_256_threads_hits_the_warp_cap():
    o = _occ("h200", 32, 0, 256)  # registers allow 64 warps, so does the cap: 8 blocks of 8 warps
    assert (o.blocks_per_cu, o.warps_per_sm, o.limited_by, o.fraction) == (8, 64, "waves", 1.0)
    assert _occ("a100", 32, 0, 256).warps_per_sm == 64


def test_nvidia_shared_memory_and_block_limits():
    # 100 KiB + 1 KiB reserved: 2 blocks in 228 KiB (H100), 1 in 164 KiB (A100)
    assert _occ("h100", 64, 100 * 1024, 128).blocks_per_cu == 2
    o = _occ("a100", 64, 100 * 1024, 128)
    assert (o.blocks_per_cu, o.limited_by) == (1, "lds")
    assert _occ("h100", 64, 227 * 1024, 128).blocks_per_cu == 1
    assert _occ("h100", 64, 227 * 1024 + 1, 128).fits is False
    o = _occ("h100", 16, 0, 32)  # one-warp blocks: 32 blocks per SM cap
    assert (o.blocks_per_cu, o.warps_per_sm, o.limited_by) == (32, 32, "blocks")


def test_occupancy_rejects_nonsense():
    with pytest.raises(ValueError):
        _occ("mi300x", 64, 0, 0)
    with pytest.raises(ValueError):
        _occ("h100", -1, 0, 128)


# --- `kerntailor targets` ------------------------------------------------------------------------------

def test_show_targets_table_lists_everything():
    text = show_targets()
    for t in TARGETS:
        assert t.name in text and t.arch in text
    assert "local GPU: none" in text
    assert "1,307.4" in text and "5.30" in text
    assert "16x16x16" in text and "64xNx16" in text


def test_show_targets_json_has_every_field_and_source():
    rows = json.loads(show_targets(json_out=True))
    assert [r["name"] for r in rows] == list(NAMES)
    fields = {f.name for f in dataclasses.fields(Target)}
    for row in rows:
        assert fields <= set(row)
        assert row["sources"]["memory_bandwidth"]
        assert row["local"] is False


def test_matrix_summary_merges_equal_shape_lists():
    assert matrix_summary(get_target("mi250x")) == "fp16/bf16 32x32x8 16x16x16; fp32 32x32x2 16x16x4"
