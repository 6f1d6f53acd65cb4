#!/usr/bin/env bash
# Issue #20 item 2 (branch decode): decode attention with the keys split across programs (flash-decoding,
# codegen/attention_split.py). A Llama decode step as bf16 SDPA (GQA 32 query / 8 KV heads, one token, KV cache of
# 4096, head dim 128) at batch 1 (32 programs unsplit: below the H200's 132 SMs, where the search offers SPLIT) and
# batch 32 (1024 programs: no split offered), on the H200, two jobs at once (the stopwatch's lock serializes the
# timed sections):
#   1. benchmarks/attn_probe.py: the split swept by hand at 16 x 64 / 4 warps / 2 stages (SPLIT 1-64) and 16 x 128
#      (1, 8, 16), 16 x 64 with TMA (8, 16), each checked against eager and timed beside eager SDPA and torch.compile (one JSON row each);
#   2. `kerntailor generate` on both files (benchmarks/gpu_calls/generate_set.sh: the search with its decode seeds,
#      the referee, the baselines), cut at GEN_LIMIT s (default 420).
# No carry needed (the problem files are in the repository: benchmarks/data/attn_probe/). Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/decode_call.sh
# Results: $OUT/results.tgz and $OUT/summary.txt (generate_set.sh's), $OUT/decode_probe.tgz and
# $OUT/attn_probe_decode.json (the sweep), $OUT/decode_summary.txt (both summaries).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/decode; rm -rf $R; mkdir -p $R
S="16x64/4w/2s,16x64/4w/2s/split2,16x64/4w/2s/split4,16x64/4w/2s/split8,16x64/4w/2s/split16,16x64/4w/2s/split32"
S="$S,16x64/4w/2s/split64,16x128/4w/2s,16x128/4w/2s/split8,16x128/4w/2s/split16,16x64/4w/2s/tma/split8"
S="$S,16x64/4w/2s/tma/split16"
timeout 480 python3 benchmarks/attn_probe.py --only decode_b1,decode_b32 --schedules "$S" --max-wall 300 \
  --out $R/attn_probe_decode.json > $R/attn_probe.log 2>&1 &
GEN_LIMIT=${GEN_LIMIT:-420} bash benchmarks/gpu_calls/generate_set.sh \
  "decode_b1=benchmarks/data/attn_probe/sdpa_gqa_decode_b1.py:--dtype bf16" "decode_b32=benchmarks/data/attn_probe/sdpa_gqa_decode_b32.py:--dtype bf16"
wait
python3 benchmarks/gpu_calls/attn_probe_rows.py $R/attn_probe_decode.json > $R/probe_summary.txt 2>&1
cp $R/attn_probe_decode.json $OUT/ 2>/dev/null
cat $OUT/summary.txt $R/probe_summary.txt $R/attn_probe.log | tail -60 > $OUT/decode_summary.txt
cat $R/probe_summary.txt; tar czf $OUT/decode_probe.tgz -C /tmp decode
