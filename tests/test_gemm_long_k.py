"""A long K in fp32 (codegen/gemm/loops.py's k_loop): past LONG_K the GEMM sums FLUSH_K-deep partial tiles into its
accumulator, decided per call by the host (the LONG_K constexpr), so that a K of a million stays within the fp32
table where the library splits K (KernelBench level-3 2_ShallowWideMLP's edge case on an H100: one level missed it,
1.25e-5 > 1e-5)."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest

from helpers import L1, L2, L3, gemm_module, matmul_kernels, prepared
from kerntailor.codegen.gemm.loops import FLUSH_K, LONG_K

TRANSPOSED_B = L1 / "matmul_transposed_b.py"   # x @ W.T: both operands are inputs, K their shared last axis


def test_the_host_decides_long_k_per_call_and_the_traced_kernel_is_one_level():
    module = gemm_module(TRANSPOSED_B, {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 64})
    (kernel,) = matmul_kernels(TRANSPOSED_B, module)
    constexprs = dict(kernel.constexprs)
    assert constexprs["LONG_K"] == 0 and constexprs["K_FLUSH"] == FLUSH_K // 64   # K = 4096 traced
    assert f"LONG_K=(d1) > {LONG_K}" in module.source and "K_FLUSH=64" in module.source
    assert "if LONG_K:" in kernel.source and "acc += acc_part" in kernel.source


def test_split_k_programs_each_sum_their_share_so_the_bound_is_per_split():
    """Under split-K each program sums K / SPLIT_K steps: the two-level loop only where that share is long."""
    from kerntailor.codegen.gemm.loops import long_k

    assert long_k("d1", 600_000) == ("LONG_K", f"(d1) > {LONG_K}", 1)
    assert long_k("d1", 600_000, 4) == ("LONG_K", f"(d1) > {4 * LONG_K}", 0)
    path = L2 / "gemm_bias_relu.py"
    module = gemm_module(path, {"split_k": 4, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    assert f"> {4 * LONG_K}, " in module.source


def test_bf16_products_keep_one_level():
    """16-bit problems are judged by a table a hundred times looser than a long fp32 sum's error: no LONG_K."""
    module = gemm_module(TRANSPOSED_B, {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 64}, dtype="bf16")
    (kernel,) = matmul_kernels(TRANSPOSED_B, module, "bf16")
    assert "LONG_K" not in kernel.source and "LONG_K" not in dict(kernel.constexprs)


_RUN = textwrap.dedent('''
    import importlib.util, json, sys
    import torch

    def load(path):
        spec = importlib.util.spec_from_file_location("k", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    g = torch.Generator().manual_seed(0)
    K = int(sys.argv[1])
    a = torch.rand(16, K, generator=g)                               # all positive: long sums that cancel
    b = (torch.rand(16, K, generator=g) * 2 - 1) / K ** 0.5
    ref = a.double() @ b.double().T
    errs = [((load(p).ModelNew()(a, b).double() - ref).norm() / ref.norm()).item() for p in sys.argv[2:]]
    print(json.dumps(errs))
''')


@pytest.mark.interpreter
@pytest.mark.slow
def test_a_long_k_is_summed_in_two_levels_and_more_accurately(tmp_path):
    """K = 262,147 under the interpreter: the module as generated (LONG_K by its host) against the same text with
    the host's choice forced to one level. The interpreter's tl.dot is numpy's (each 64-deep step exact to fp32
    rounding), so one level here is kinder than a GPU's FMA chain; two levels must still be several times closer."""
    module = gemm_module(TRANSPOSED_B, {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 64})
    two, one = tmp_path / "two.py", tmp_path / "one.py"
    two.write_text(module.source)
    choice = f"LONG_K=(d1) > {LONG_K}"
    one.write_text(module.source.replace(choice, "LONG_K=False"))
    script = tmp_path / "run.py"
    script.write_text(_RUN)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    r = subprocess.run([sys.executable, str(script), "262147", str(two), str(one)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    two_err, one_err = json.loads(r.stdout.strip().splitlines()[-1])
    assert two_err < 1e-6 and two_err * 3 < one_err, (two_err, one_err)


SPECIALIZED = {   # (problem, knobs, arch): fp32 products whose LONG_K specialization must build
    "dot_ieee_sm90": (L1 / "matmul_square.py", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, "sm_90"),
    "tma_sm90": (L1 / "matmul_transposed_a.py", {"TMA": 1, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, "sm_90"),
    "split_k_gfx942": (L2 / "gemm_bias_relu.py", {"split_k": 4, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
                       "gfx942"),
    "dual_gfx942": (L3 / "swiglu_mlp.py", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
                    "gfx942"),
}


@pytest.mark.compile
@pytest.mark.slow
@pytest.mark.parametrize("case", list(SPECIALIZED))
def test_the_long_k_specialization_cross_compiles(case):
    """The builder compiles the traced specialization (LONG_K = 0); the one a call with a long K compiles at run
    time (LONG_K = 1: nested loops, a second accumulator tile) must build too, with matrix instructions where the
    policy uses them."""
    from kerntailor.builder.compile import compile_here
    from kerntailor.generate.kernels import kernel_source
    from kerntailor.targets import get_target

    path, knobs, arch = SPECIALIZED[case]
    module = gemm_module(path, knobs, arch=arch)
    kernel = next(k for k in matmul_kernels(path, module) if "LONG_K" in dict(k.constexprs))
    traced = kernel_source(module.source, kernel, prepared(path)[2])
    long = dataclasses.replace(traced, constexprs={**dict(traced.constexprs), "LONG_K": 1})
    target = get_target("h100" if arch == "sm_90" else "mi300x")
    for source in (traced, long):
        result, _ = compile_here(source, target)
        assert result.ok, (case, result.error)
    if arch == "gfx942":   # fp32 MFMA in both levels' loops
        assert result.facts.matrix_instr_count > 0, result.facts
