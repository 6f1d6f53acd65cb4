"""The build stage: cross-compiling for AMD and NVIDIA targets on a CPU, ISA facts, limits, cache, pool.

Unit tests of the parsers run on real compiler output saved in tests/data/isa/ (see its README).
The rest compile real kernels with triton (no GPU needed; about 0.1-1 s per compile).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kerntailor.builder import (
    BuildCache,
    BuildPool,
    IsaFacts,
    KernelSource,
    build_many,
    check_limits,
    cross_compile,
    default_cache_dir,
)
from kerntailor.builder.isa import count_matrix_and_loads, parse_amdgcn, parse_ptxas_log, ptx_arch
from kerntailor.targets import get_target

DATA = Path(__file__).parent / "data" / "isa"

RELU_SRC = '''
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)
'''

GEMM_SRC = '''
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))
'''

BAD_SRC = '''
import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.dot(x, x)
    tl.store(y_ptr + offs, y)
'''

TARGETS = ["mi300x", "mi250x", "mi355x", "h100", "a100"]   # gfx942, gfx90a, gfx950, sm_90, sm_80
AMD_OPTIONS = {"num_warps": 4, "num_stages": 2, "waves_per_eu": 0, "matrix_instr_nonkdim": 16, "kpack": 1}


def relu(block=1024) -> KernelSource:
    return KernelSource(RELU_SRC, "relu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
                        {"BLOCK": block}, {"num_warps": 4},
                        specialization={"x_ptr": "DS", "y_ptr": "DS", "n": "D"})


def gemm(bm=64, bn=64, bk=64, dtype="bf16", options=None) -> KernelSource:
    """A (M, K) @ (K, N) GEMM with unit inner strides specialized to 1, as Triton does at launch."""
    signature = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", "M": "i32", "N": "i32",
                 "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
    specialization = {name: "DS" if ty.startswith("*") else "D" for name, ty in signature.items()}
    constexprs = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    return KernelSource(GEMM_SRC, "matmul_kernel", signature, constexprs, options or AMD_OPTIONS,
                        specialization=specialization)


# ---- parsers on saved real output --------------------------------------------------------------


def test_parse_amdgcn_whole_gemm_text():
    facts = parse_amdgcn((DATA / "gemm64_gfx942.amdgcn").read_text())
    assert facts["vgprs"] == 93
    assert facts["agprs"] == 16
    assert facts["registers"] == 112          # .vgpr_count: arch + AGPR as allocated
    assert facts["sgprs"] == 37
    assert (facts["vgpr_spills"], facts["sgpr_spills"], facts["spills"]) == (0, 0, 0)
    assert facts["scratch_bytes"] == 0
    assert facts["occupancy"] == 4
    assert facts["lds_static_bytes"] == 0     # Triton's LDS is dynamic: it is in metadata.shared instead
    assert facts["code_size_bytes"] == 3628
    assert facts["matrix_instr_count"] == 24
    assert facts["matrix_instr_kinds"] == ("v_mfma_f32_32x32x8_f16",)
    assert facts["global_load_widths"] == (("buffer_load_dwordx4", 12),)


def test_parse_amdgcn_metadata_excerpts():
    big = parse_amdgcn((DATA / "gemm128_gfx942.meta.amdgcn").read_text())
    assert (big["vgprs"], big["agprs"], big["registers"], big["sgprs"]) == (142, 64, 208, 47)
    assert (big["occupancy"], big["spills"], big["code_size_bytes"]) == (2, 0, 6768)

    spilling = parse_amdgcn((DATA / "gemm256_gfx942.meta.amdgcn").read_text())
    assert (spilling["vgprs"], spilling["agprs"], spilling["registers"]) == (256, 256, 512)
    assert (spilling["vgpr_spills"], spilling["sgpr_spills"], spilling["spills"]) == (154, 0, 154)
    assert spilling["scratch_bytes"] == 588
    assert spilling["private_segment_bytes"] == 588
    assert spilling["occupancy"] == 1

    sgpr = parse_amdgcn((DATA / "gemm128_sgprspill_gfx942.meta.amdgcn").read_text())
    assert (sgpr["vgpr_spills"], sgpr["sgpr_spills"], sgpr["scratch_bytes"]) == (0, 4, 0)
    assert (sgpr["vgprs"], sgpr["agprs"], sgpr["registers"], sgpr["sgprs"]) == (172, 86, 258, 106)


def test_parse_ptxas_logs():
    assert parse_ptxas_log((DATA / "gemm64_sm90.ptxas.log").read_text()) == {
        "registers": 64, "stack_bytes": 0, "spill_store_bytes": 0, "spill_load_bytes": 0, "spills": 0,
        "smem_bytes": 0, "barriers": 1}
    assert parse_ptxas_log((DATA / "gemm128_sm90.ptxas.log").read_text())["registers"] == 196
    assert parse_ptxas_log((DATA / "gemm128_sm80.ptxas.log").read_text())["registers"] == 255
    sm90 = parse_ptxas_log((DATA / "gemm128_spill_sm90.ptxas.log").read_text())
    assert (sm90["registers"], sm90["spill_store_bytes"], sm90["spill_load_bytes"]) == (255, 196, 196)
    assert sm90["spills"] == 392
    assert sm90["stack_bytes"] == 200
    sm80 = parse_ptxas_log((DATA / "gemm128_spill_sm80.ptxas.log").read_text())
    assert (sm80["registers"], sm80["spill_store_bytes"], sm80["spill_load_bytes"]) == (255, 228, 224)
    assert sm80["spills"] == 452
    assert sm80["stack_bytes"] == 224
    with pytest.raises(ValueError):
        parse_ptxas_log("ptxas fatal   : Unresolved extern function 'foo'")


def test_count_ptx_instructions():
    ptx = (DATA / "gemm64_sm90.ptx").read_text()
    assert ptx_arch(ptx) == "sm_90a"
    counts = count_matrix_and_loads(ptx, "cuda")
    assert counts["matrix_instr_count"] == 4
    assert counts["matrix_instr_kinds"] == ("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",)
    assert counts["global_load_widths"] == (("cp.async.cg.shared.global.16B", 16),)


# ---- limits and keys (no compiler) ---------------------------------------------------------------


def _facts(**changes) -> IsaFacts:
    base = IsaFacts(backend="hip", arch="gfx942", num_warps=4, registers=128, spills=0, scratch_bytes=0,
                    lds_bytes=16384, vgprs=128, agprs=0, sgprs=40, occupancy=4, vgpr_spills=0, sgpr_spills=0)
    return replace(base, **changes)


def test_check_limits():
    mi300x, h100 = get_target("mi300x"), get_target("h100")
    assert check_limits(_facts(), mi300x) is None
    assert "LDS 131072 B exceeds the 65536 B" in check_limits(_facts(lds_bytes=131072), mi300x)
    assert "threads per block" in check_limits(_facts(num_warps=32), mi300x)
    nv = _facts(backend="cuda", arch="sm_90", registers=300, vgprs=None, agprs=None, sgprs=None)
    assert "300 registers per thread exceed the 255" in check_limits(nv, h100)
    # spills: rejected only when forbidden, and only spills to memory (not SGPRs parked in VGPR lanes)
    vgpr_spill = _facts(spills=154, vgpr_spills=154, scratch_bytes=588)
    assert check_limits(vgpr_spill, mi300x) is None
    assert "154 VGPR spills" in check_limits(vgpr_spill, mi300x, allow_spills=False)
    assert check_limits(_facts(spills=4, sgpr_spills=4), mi300x, allow_spills=False) is None
    nv_spill = replace(nv, registers=255, spills=392, scratch_bytes=200)
    assert "392 B of spill" in check_limits(nv_spill, h100, allow_spills=False)


def test_kernel_source_key_is_stable_and_sensitive():
    a = relu()
    b = KernelSource(RELU_SRC, "relu_kernel", (("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("n", "i32")),
                     (("BLOCK", 1024),), (("num_warps", 4),), specialization={"n": "D", "y_ptr": "DS", "x_ptr": "DS"})
    assert a == b and a.key() == b.key() and hash(a) == hash(b)
    assert relu(block=512).key() != a.key()
    assert replace(a, options=(("num_warps", 8),)).key() != a.key()
    assert replace(a, specialization=None).key() != a.key()


def test_default_cache_dir_reads_environment_at_call_time(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "build-cache"
    monkeypatch.delenv("KERNTAILOR_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "kerntailor" / "build-cache"


# ---- real compiles --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """relu and a 64x64x64 bf16 GEMM for every target, built by the pool: {(kernel, target): result}."""
    cache = tmp_path_factory.mktemp("build-cache")
    kernels = {"relu": relu(), "gemm": gemm()}
    results = build_many(list(kernels.values()), [get_target(t) for t in TARGETS], workers=2, timeout_s=120,
                         cache_dir=cache)
    pairs = [(k, t) for k in kernels for t in TARGETS]       # kernel-major, as build_many returns them
    assert len(results) == len(pairs)
    return dict(zip(pairs, results))


@pytest.mark.compile
@pytest.mark.parametrize("target", TARGETS)
def test_relu_builds(built, target):
    r = built["relu", target]
    assert r.ok and r.error == "" and r.rejected_reason is None and r.usable, r.error
    assert r.target == target and r.key == relu().key()
    f = r.facts
    assert f.registers > 0 and f.spills == 0 and f.lds_bytes == 0 and f.matrix_instr_count == 0
    assert f.num_warps == 4 and f.code_size_bytes and f.code_size_bytes > 0
    if f.backend == "hip":
        assert f.vgprs > 0 and f.sgprs > 0 and f.occupancy == 8 and f.occupancy_rule == 8
        assert dict(f.global_load_widths) == {"buffer_load_dwordx4": 1}   # 1024 fp32 / 256 lanes, 16 B each
    else:
        assert f.vgprs is None and f.occupancy is None and f.occupancy_rule == 64
        assert dict(f.global_load_widths) == {"ld.global.v4.b32": 2}


@pytest.mark.compile
@pytest.mark.parametrize("target", TARGETS)
def test_gemm_builds_with_matrix_instructions(built, target):
    r = built["gemm", target]
    assert r.ok and r.usable, r.error
    f = r.facts
    assert f.lds_bytes > 0 and f.registers > 0 and f.matrix_instr_count > 0
    # matrix_instr_nonkdim=16 picks the 16x16 MFMA; gfx950 has a K=32 one
    expected_kind = {"mi300x": "v_mfma_f32_16x16x16_bf16", "mi250x": "v_mfma_f32_16x16x16bf16_1k",
                     "mi355x": "v_mfma_f32_16x16x32_bf16",
                     "h100": "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
                     "a100": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}[target]
    assert f.matrix_instr_kinds == (expected_kind,)
    if f.backend == "hip":
        assert f.vgprs > 0 and f.agprs > 0 and f.occupancy >= 1
        assert f.occupancy_rule is not None and f.occupancy_limited_by
        assert dict(f.global_load_widths).get("buffer_load_dwordx4", 0) > 0
    else:
        # AMD-only options were dropped, and said so
        assert any("kpack" in w and "dropped" in w for w in r.warnings)


@pytest.mark.compile
def test_compile_error_is_one_line():
    bad = KernelSource(BAD_SRC, "bad_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {"BLOCK": 64})
    r = cross_compile(bad, get_target("mi300x"), timeout_s=None, use_cache=False)
    assert not r.ok and r.facts is None
    assert "\n" not in r.error
    assert r.error == "CompilationError: input and other must have equal ranks >= 2 (in bad_kernel, line 10)"

    syntax = KernelSource(RELU_SRC.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 0.0"), "relu_kernel",
                          {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    r = cross_compile(syntax, get_target("h100"), timeout_s=None, use_cache=False)
    assert not r.ok and r.error.startswith("SyntaxError:") and "\n" not in r.error

    missing = replace(relu(), kernel_name="nope_kernel")
    r = cross_compile(missing, get_target("mi300x"), timeout_s=None, use_cache=False)
    assert r.error == "ValueError: the source defines no @triton.jit function named 'nope_kernel'"

    short_signature = replace(relu(), signature=(("x_ptr", "*fp32"), ("y_ptr", "*fp32")))
    r = cross_compile(short_signature, get_target("mi300x"), timeout_s=None, use_cache=False)
    assert r.error == "ValueError: signature lacks argument 'n' of relu_kernel"


@pytest.mark.compile
def test_lds_over_the_block_limit_is_rejected():
    # 64 x 512 bf16 tiles of A and B: 128 KiB of LDS, over the 64 KiB per workgroup of MI300X.
    r = cross_compile(gemm(64, 64, 512), get_target("mi300x"), timeout_s=None, use_cache=False)
    assert r.ok and not r.usable
    assert r.facts.lds_bytes == 131072
    assert r.rejected_reason == "LDS 131072 B exceeds the 65536 B per block of mi300x"
    assert r.facts.occupancy_rule == 0 and r.facts.occupancy_limited_by == "lds"


@pytest.mark.compile
def test_cache_hit_skips_the_compiler(tmp_path, monkeypatch):
    target = get_target("mi300x")
    first = cross_compile(relu(), target, timeout_s=None, cache_dir=tmp_path)
    assert first.ok and not first.cached
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1 and files[0].stat().st_size < 4096
    assert json.loads(files[0].read_text())["facts"]["registers"] == first.facts.registers

    import kerntailor.builder.compile as compile_module

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled despite a cache hit")

    monkeypatch.setattr(compile_module, "compile_here", no_compiling)
    second = cross_compile(relu(), target, timeout_s=None, cache_dir=tmp_path)
    assert second.cached and second.ok and second.facts == first.facts
    assert second.asm == {}
    # the pool consults the same cache before it starts any worker
    third = build_many([relu()], [target], cache_dir=tmp_path)[0]
    assert third.cached and third.facts == first.facts
    # the entry is per target
    assert BuildCache(tmp_path).get(relu(), get_target("mi250x")) is None


@pytest.mark.compile
def test_keep_asm_returns_the_text():
    r = cross_compile(relu(), get_target("h100"), timeout_s=None, keep_asm=True, use_cache=False)
    assert ".target sm_90a" in r.asm["ptx"]


SLOW_SRC = "import time\ntime.sleep(60)\n" + RELU_SRC
CRASH_SRC = "import os\nos._exit(3)\n" + RELU_SRC


@pytest.mark.compile
def test_build_many_times_out_and_survives_crashes(tmp_path):
    slow = replace(relu(), source=SLOW_SRC)
    crash = replace(relu(), source=CRASH_SRC)
    kernels = [slow, relu(), crash, gemm()]
    results = build_many(kernels, get_target("mi300x"), workers=2, timeout_s=8, cache_dir=tmp_path)
    assert [r.key for r in results] == [k.key() for k in kernels]
    assert not results[0].ok and results[0].error == "timeout after 8s"
    assert results[1].ok and results[3].ok
    assert not results[2].ok and results[2].error == "worker crashed (exit code 3)"
    # neither the timeout nor the crash is cached; the good builds are
    assert len(list(tmp_path.rglob("*.json"))) == 2


@pytest.mark.compile
def test_pool_is_reusable_and_works_under_the_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")   # the verify stage's CPU mode must not leak into builds
    with BuildPool(workers=1, timeout_s=60) as pool:
        first = pool.build([relu()], [get_target("mi300x")])
        second = pool.build([relu(512)], [get_target("h100")])
    assert first[0].ok and second[0].ok, (first[0].error, second[0].error)


@pytest.mark.compile
def test_toolchain_failure_is_reported_and_not_cached(tmp_path, monkeypatch):
    import kerntailor.builder.compile as compile_module

    def missing(arch):
        raise compile_module._ToolError(f"ptxas not found for {arch}")

    monkeypatch.setattr(compile_module, "ptxas_path", missing)
    r = cross_compile(relu(), get_target("a100"), timeout_s=None, cache_dir=tmp_path)
    assert not r.ok and r.error == "ptxas not found for sm_80"
    assert list(tmp_path.rglob("*.json")) == []
