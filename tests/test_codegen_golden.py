"""Golden kernels: the kernel.py text generated for suite problems under fixed schedules, compared to
tests/golden/<name>.py (date, version and problem hash normalized). `pytest --accept-golden` rewrites them.

One case per writer path, so that a change to codegen that moves any generated text shows up here as a diff:
- pointwise: flat (with and without coordinates); [rows, last axis] tiles (persistent and looped); a helper
  (tanh); bf16 with Mish's one-exp tanh(softplus).
- reduction: persistent rows; looped rows with online softmax; Welford; a split whole-tensor reduction;
  reduced axes looped as scalars around a contiguous inner loop (GroupNorm; and persistent); rows strided across
  the reduced axes (XBLOCK > 1); split rows (a partials kernel, then the normalising one); argmax and an
  integer amax; a gather recomputed per row (cross-entropy); inline members
  read through a narrowing view (rotary embedding's cat).
- matmul: the plain tl.dot path; split-K (2-D and batched); GEMV (and GEMV split-K); TMA and persistent
  programs on sm_90; tf32x3; fp8-row on sm_90 and fp8-tensor on gfx942; the library product with a row tail;
  the row tail (plain and persistent TMA); AMD compile options; a dual GEMM (SwiGLU: gate and up in one kernel).
- scan: inclusive, reverse, exclusive, a scan along a middle axis; cumprod in bf16.
- pool: 1-D, 2-D (max and average), 3-D, ceil mode, dilation; the window of masked loads (dilated 2-D, 3-D) and
  the span schedule (the default where the last axis's windows overlap: KernelBench 41's window, stride 2); a
  pointwise prologue computed on the padded window; the sliding schedule (ROWS = 4 output rows per program loading
  their shared input rows once).
- attention: SDPA in fp32 (ieee); causal in bf16 with the Hopper seed tiles (and the V scan before it); GQA from
  repeat_interleave (k/v read at head i·Hkv // Hq); a boolean mask; an additive mask with an explicit scale; a
  pointwise epilogue (`* 0.5 + q`); attention written out (capture/rewrite_attention.py): decode (Lq = 1, no mask)
  and MinGPT's masked_fill of a tril buffer (the mask replaces scores, an emptied row is NaN).
- conv: the implicit GEMM with an epilogue, then a pool; groups, dilation and bias + ReLU in bf16; a 3-d
  convolution with tf32 products on sm_90; a depthwise one (the window loop). Mixed: the library's convolution
  with a generated tail.
- a batched GEMV and a persistent softmax (decode_scores: a decode step's scores, returned).
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from helpers import DATA, L1, L2, L3, make_module, normalize

GOLDEN = Path(__file__).parent / "golden"

# name -> (problem, dtype, {family: knob overrides}, arch). Overrides apply to every group of that family.
_PERSISTENT_TMA = {"TMA": 1, "PERSISTENT": 1, "BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8,
                   "num_stages": 3}
CASES = {
    # the first four: the memory-bound golden files that predate this table (default knobs, gfx942)
    "softmax_short_rows": (L1 / "softmax_short_rows.py", None, {}, "gfx942"),
    "layernorm": (L1 / "layernorm.py", None, {}, "gfx942"),
    "cross_entropy": (L1 / "cross_entropy.py", None, {}, "gfx942"),
    "gelu_tanh": (L1 / "gelu_tanh.py", None, {}, "gfx942"),
    # pointwise
    "relu_bf16": (L1 / "relu.py", "bf16", {}, "gfx942"),
    "batchnorm2d_eval": (L1 / "batchnorm2d_eval.py", None, {}, "gfx942"),
    "batchnorm2d_eval_flat": (L1 / "batchnorm2d_eval.py", None,
                              {"pointwise": {"XBLOCK": 1024, "num_warps": 4, "tiles": False}}, "gfx942"),
    "mish_bf16": (L1 / "mish.py", "bf16", {}, "gfx942"),
    "rotary_embedding": (L3 / "rotary_embedding.py", None, {}, "gfx942"),
    # reduction
    # the looped kernel, one program per row, pinned: the default became the windowed split below
    "softmax_long_rows": (L1 / "softmax_long_rows.py", None,
                          {"reduction": {"XBLOCK": 1, "RBLOCK": 4096, "persistent": False, "num_warps": 8}}, "gfx942"),
    # 23_Softmax's sizes under the default: one windowed split-row kernel (codegen/fused/splitrows.py)
    "softmax_long_rows_windowed": (L1 / "softmax_long_rows.py", None, {}, "gfx942"),
    "layernorm_looped": (L1 / "layernorm.py", None,
                         {"reduction": {"XBLOCK": 1, "RBLOCK": 1024, "persistent": False, "num_warps": 4}}, "gfx942"),
    "groupnorm": (L1 / "groupnorm.py", None, {}, "gfx942"),
    "groupnorm_persistent": (L1 / "groupnorm.py", None,
                             {"reduction": {"XBLOCK": 1, "RBLOCK": 1024, "persistent": True, "num_warps": 4,
                                            "num_stages": 2}}, "sm_90"),
    "sum_all": (L1 / "sum_all.py", None, {}, "gfx942"),
    "mean_middle_axis": (L1 / "mean_middle_axis.py", None, {}, "gfx942"),
    "argmax_last_axis": (L1 / "argmax_last_axis.py", None, {}, "gfx942"),
    "int_amax": (DATA / "codegen_fused" / "tiny_int_amax.py", None, {}, "gfx942"),
    "rmsnorm_amd": (L1 / "rmsnorm.py", "bf16",
                    {"reduction": {"XBLOCK": 2, "RBLOCK": 64, "persistent": False, "num_warps": 2,
                                   "waves_per_eu": 2}}, "gfx942"),
    "decode_scores": (DATA / "codegen_fused" / "decode_scores.py", None, {}, "gfx942"),
    "batchnorm3d_train_split_rows": (DATA / "codegen_fused" / "tiny_batchnorm3d_train.py", None,
                                     {"reduction": {"XBLOCK": 1, "RBLOCK": 2048, "SPLIT": 32, "persistent": False,
                                                    "num_warps": 8}}, "sm_90"),
    # matmul
    "gemm_bias_gelu": (L2 / "gemm_bias_gelu.py", None, {}, "gfx942"),
    "gemm_bias_gelu_split_k": (L2 / "gemm_bias_gelu.py", None,
                               {"matmul": {"split_k": 2, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
                                           "GROUP_M": 4}}, "gfx942"),
    "bmm_split_k_bf16": (L1 / "bmm.py", "bf16", {"matmul": {"split_k": 2, "BLOCK_M": 64, "BLOCK_N": 64}}, "gfx942"),
    "matvec": (L1 / "matvec.py", None, {}, "gfx942"),
    "matvec_split_k": (L1 / "matvec.py", None, {"matmul": {"BLOCK_M": 128, "BLOCK_K": 32, "split_k": 2}}, "gfx942"),
    "gemm_bias_relu_persistent_tma_sm90": (L2 / "gemm_bias_relu.py", "bf16", {"matmul": _PERSISTENT_TMA}, "sm_90"),
    "matmul_transposed_a_tma_sm90": (L1 / "matmul_transposed_a.py", None,
                                     {"matmul": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "TMA": 1}}, "sm_90"),
    "matmul_square_persistent_sm90": (L1 / "matmul_square.py", None,
                                      {"matmul": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "PERSISTENT": 1}},
                                      "sm_90"),
    "matmul_transposed_a_tf32x3_sm90": (L1 / "matmul_transposed_a.py", None, {"matmul": {"precision": "tf32x3"}},
                                        "sm_90"),
    "gemm_bias_relu_fp8_row_sm90": (L2 / "gemm_bias_relu.py", "bf16",
                                    {"matmul": {"precision": "fp8-row", "TMA": 1, "PERSISTENT": 1, "BLOCK_M": 128,
                                                "BLOCK_N": 128, "BLOCK_K": 128, "num_warps": 8, "num_stages": 3}},
                                    "sm_90"),
    "gemm_bias_relu_fp8_tensor_gfx942": (L2 / "gemm_bias_relu.py", "bf16",
                                         {"matmul": {"precision": "fp8-tensor", "BLOCK_K": 64}}, "gfx942"),
    "gemm_logsumexp_row_tail_bf16": (L2 / "gemm_logsumexp.py", "bf16", {}, "gfx942"),
    "gemm_logsumexp_row_tail_persistent_sm90": (L2 / "gemm_logsumexp.py", "bf16", {"matmul": _PERSISTENT_TMA},
                                                "sm_90"),
    "gemm_logsumexp_library": (L2 / "gemm_logsumexp.py", "bf16",
                               {"matmul": {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4, "LIBRARY": 1}}, "sm_90"),
    "matmul_square_amd_bf16": (L1 / "matmul_square.py", "bf16",
                               {"matmul": {"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}}, "gfx942"),
    "swiglu_mlp": (L3 / "swiglu_mlp.py", None, {}, "gfx942"),
    # scan
    "cumsum": (L1 / "cumsum.py", None, {}, "gfx942"),
    "cumsum_reverse": (DATA / "codegen" / "cumsum_reverse.py", None, {"scan": {"RBLOCK": 16}}, "gfx942"),
    "cumsum_exclusive": (DATA / "codegen" / "cumsum_exclusive.py", None, {"scan": {"RBLOCK": 16}}, "gfx942"),
    "cumsum_middle_axis": (DATA / "codegen" / "cumsum_middle_axis.py", None, {"scan": {"XBLOCK": 4, "RBLOCK": 16}},
                           "gfx942"),
    "cumprod_bf16": (DATA / "codegen" / "cumprod.py", "bf16", {}, "gfx942"),
    # pool
    "maxpool1d": (DATA / "codegen" / "maxpool1d.py", None, {}, "gfx942"),
    "maxpool2d": (L1 / "maxpool2d.py", None, {}, "gfx942"),
    "avgpool2d": (L1 / "avgpool2d.py", None, {}, "gfx942"),
    "avgpool2d_ceil": (DATA / "codegen" / "avgpool2d_ceil.py", None, {"pool": {"XBLOCK": 128}}, "gfx942"),
    "maxpool2d_dilated": (DATA / "codegen" / "maxpool2d_dilated.py", None, {"pool": {"SPAN": 0}}, "gfx942"),
    "avgpool3d": (DATA / "codegen" / "avgpool3d.py", None, {"pool": {"SPAN": 0}}, "gfx942"),
    "maxpool1d_span": (DATA / "codegen" / "maxpool1d_dilated.py", None, {}, "sm_90"),
    "avgpool2d_prologue_pad": (DATA / "pool_prologue" / "avgpool2d_pad.py", None, {}, "sm_90"),
    "maxpool2d_sliding": (DATA / "codegen" / "maxpool2d_overlap.py", None,
                          {"pool": {"ROWS": 4, "SPAN": 0, "num_warps": 4}}, "gfx942"),
    # attention
    "sdpa_attention": (L1 / "sdpa.py", None, {}, "gfx942"),
    "causal_attention_sdpa_bf16_sm90": (L3 / "causal_attention_sdpa.py", "bf16",
                                        {"attention": {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8,
                                                       "num_stages": 3}}, "sm_90"),
    "gqa_causal_attention": (L3 / "gqa_causal_attention.py", None, {}, "gfx942"),
    "sdpa_bool_mask": (DATA / "attention" / "sdpa_bool_mask.py", None, {}, "gfx942"),
    "sdpa_additive_mask": (DATA / "attention" / "sdpa_additive_mask.py", None, {}, "gfx942"),
    "decode_attention": (L3 / "decode_attention.py", None, {}, "gfx942"),     # written out: one attention kernel
    "written_mingpt": (DATA / "attention" / "written_mingpt.py", None, {}, "gfx942"),
    "sdpa_tail_epilogue": (DATA / "mixed" / "sdpa_tail.py", None, {}, "gfx942"),
    # mixed: the library's convolution (without codegen's conv family: MIXED), a tiled pointwise tail with a
    # one-element parameter, a pool
    "mixed_conv_scale_pool": (DATA / "mixed" / "conv_scale_pool.py", None, {}, "gfx942"),
    # conv: the generated implicit GEMM with its scale epilogue, then the pool; groups, dilation and bias + ReLU
    # in bf16; a 3-d convolution; tf32 products on sm_90
    "conv_scale_pool": (DATA / "mixed" / "conv_scale_pool.py", None, {}, "gfx942"),
    "conv2d_groups_bias_relu_bf16": (DATA / "conv" / "conv2d_groups_bias_relu.py", "bf16", {}, "gfx942"),
    "conv3d_scale_tf32_sm90": (DATA / "conv" / "conv3d_scale.py", None, {"conv": {"precision": "tf32"}}, "sm_90"),
    "depthwise_conv2d_relu6_bf16": (DATA / "conv" / "depthwise2d_multiplier_bias_relu6.py", "bf16", {}, "gfx942"),
}


def generated_text(name: str) -> str:
    path, dtype, overrides, arch = CASES[name]
    return normalize(make_module(path, overrides, dtype, arch).source)


MIXED = ("mixed_conv_scale_pool",)   # generated without codegen's conv family: the convolution is the library's


@pytest.mark.parametrize("name", list(CASES))
def test_golden_kernel_text(name, accept_golden, request):
    if name in MIXED:
        request.getfixturevalue("library_conv")
    text = generated_text(name)
    assert "DATE" in text and "VERSION" in text and "HASH" in text
    golden = GOLDEN / f"{name}.py"
    if accept_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
        return
    assert golden.exists(), f"{golden} is missing: run `pytest --accept-golden {__file__}` and review it"
    expected = golden.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(golden), "generated"))
        pytest.fail(f"generated kernel.py for {name} differs from its golden file (if intended, rerun with "
                    f"--accept-golden and review the diff):\n{diff}")


def test_every_golden_file_has_a_case():
    """A golden file nobody generates any more is a stale one: remove it or add its case back."""
    assert sorted(p.stem for p in GOLDEN.glob("*.py")) == sorted(CASES)
