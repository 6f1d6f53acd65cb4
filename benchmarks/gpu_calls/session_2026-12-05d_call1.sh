#!/usr/bin/env bash
# GPU call 1 of the fourth session of 2026-12-05 (issues #20 item 2 and #14): the two branches merged in the third
# session (decode, refus2), never run on a GPU, measured in one call on the H200.
#  1. benchmarks/attn_probe.py on the Llama decode step as SDPA (GQA 32/8 heads, Lk 4096, D 128, bf16) at batch 1
#     and 32: SPLIT swept by hand (decode_call.sh's schedules), each checked against eager, timed beside eager SDPA
#     and torch.compile; in the background.
#  1b. benchmarks/strided_probe.py --rows short: sum and max over many short rows (2, 16, 64 elements) at 1 to 256
#     rows a program, fp32 and bf16, in the background (calibrates the cost model's bytes-in-flight term).
#  2. The GPU form of the row helpers (tests/test_codegen_helpers.py -k on_the_gpu: _row_prod_hw beside max/min).
#  3. `kerntailor generate` (generate_set.sh, all at once, GEN_LIMIT 330 s) on both decode files and on refus2's
#     problems: torch.prod over a strided axis (fp32, bf16), roll + LayerNorm, the scan whose epilogue reads the
#     row end, KernelBench's 49_Mamba2ReturnFinalState (carried: benchmarks/work/kb/level3), and 62_Matmul_GroupNorm
#     (carried: its norm is 524,288 rows of 16; -vv logs every trial's time: the cost model ties XBLOCK 1 to 64).
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05d_call1.sh   (carry ["benchmarks/work/kb"])
# Results: $OUT/results.tgz + $OUT/summary.txt (generate), $OUT/attn_probe_decode.json + $OUT/probe_summary.txt
# (the sweep), $OUT/gpu_tests.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/decode; rm -rf $R; mkdir -p $R
S="16x64/4w/2s,16x64/4w/2s/split2,16x64/4w/2s/split4,16x64/4w/2s/split8,16x64/4w/2s/split16,16x64/4w/2s/split32"
S="$S,16x64/4w/2s/split64,16x128/4w/2s,16x128/4w/2s/split8,16x128/4w/2s/split16,16x64/4w/2s/tma/split8"
S="$S,16x64/4w/2s/tma/split16"
timeout 360 python3 benchmarks/attn_probe.py --only decode_b1,decode_b32 --schedules "$S" --max-wall 240 \
  --out $R/attn_probe_decode.json > $R/attn_probe.log 2>&1 &
timeout 300 python3 benchmarks/strided_probe.py $R/short --rows short --no-compile --max-wall 150 > $R/short_probe.log 2>&1 &
python3 -m pytest -q -p no:cacheprovider tests/test_codegen_helpers.py -k on_the_gpu > $R/gpu_tests.txt 2>&1
echo "gpu helper tests rc=$?" >> $R/gpu_tests.txt
KB=benchmarks/work/kb
GEN_VERBOSE=-vv GEN_LIMIT=${GEN_LIMIT:-330} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-40} bash benchmarks/gpu_calls/generate_set.sh \
  "decode_b1=benchmarks/data/attn_probe/sdpa_gqa_decode_b1.py:--dtype bf16" \
  "decode_b32=benchmarks/data/attn_probe/sdpa_gqa_decode_b32.py:--dtype bf16" \
  prod_dim1=problems/level1/prod_over_a_dimension.py "prod_dim1_bf16=problems/level1/prod_over_a_dimension.py:--dtype bf16" \
  roll_norm=tests/data/refusals/roll_then_layernorm.py scan_row_end=tests/data/refusals/scan_row_end.py \
  mamba2_49=$KB/level3/49_Mamba2ReturnFinalState.py "gn62=$KB/62_Matmul_GroupNorm_LeakyReLU_Sum.py:--candidates 24"
wait
python3 benchmarks/gpu_calls/attn_probe_rows.py $R/attn_probe_decode.json > $R/probe_summary.txt 2>&1
cp $R/attn_probe_decode.json $R/probe_summary.txt $R/gpu_tests.txt $OUT/ 2>/dev/null; cp $R/attn_probe.log $OUT/ 2>/dev/null
tar czf $OUT/short_probe.tgz -C $R short short_probe.log; tail -3 $R/short_probe.log
cat $R/gpu_tests.txt | tail -3; cat $R/probe_summary.txt
