#!/usr/bin/env bash
# GPU call 2 of the second session of 2026-12-05 (issues #20, #21): where the generated modules of call 1 lose to
# torch.compile, per kernel, then `generate` again after the row-statistics fix.
#  1. benchmarks/libtail_profile.py (torch.profiler device time per kernel, eager / compile / modules side by side):
#     rope_sdpa at B 2, T 2048, 16 x 128 (bf16) with call 1's generated module and the ten attention-prologue
#     modules of benchmarks/attn_prologue_modules.py (RoPE of q and k in the attention's loads, of q only, of
#     neither; attention schedules that fit); llama_decoder_block and swiglu_mlp with call 1's generated modules.
#  2. generate (generate_set.sh) on llama_decoder_block and 31_VisionAttention, bf16 (their norms were split into a
#     kernel per op in call 1: "reads pw3 through a view that is not a narrowing"), and swiglu_mlp (the dual group's
#     library form, b70525d, now timed beside the dual kernel).
# Refused at the first try (the device paused after call 1): the plan for the next GPU session.
# Prepare, carry ["benchmarks/work/gpu05"]: rope_sdpa_2k.py (sed of tests/data/attention/rope_sdpa.py: seq 2048,
#   hidden 2048, heads 16, max_seq 4096), 31_VisionAttention.py (../shared/kernelbench/level3), call1/<run>.py
#   (call 1's generated.py files), mods/ (attn_prologue_modules.py benchmarks/work/gpu05/rope_sdpa_2k.py
#   benchmarks/work/gpu05/mods).
export PYTHONPATH=src PYTHONUNBUFFERED=1
W=benchmarks/work/gpu05; P=/tmp/prof; mkdir -p $P
python3 benchmarks/libtail_profile.py $W/rope_sdpa_2k.py $W/call1/rope2k_bf16.py $W/mods/*.py --dtype bf16 \
  --out $P/rope2k_profile.json > $P/rope2k_profile.txt 2>&1; echo "rope2k profile rc=$?"
python3 benchmarks/libtail_profile.py problems/level3/llama_decoder_block.py $W/call1/llama_bf16.py --dtype bf16 \
  --out $P/llama_profile.json > $P/llama_profile.txt 2>&1; echo "llama profile rc=$?"
python3 benchmarks/libtail_profile.py problems/level3/swiglu_mlp.py $W/call1/swiglu_mlp_bf16.py --dtype bf16 \
  --out $P/swiglu_profile.json > $P/swiglu_profile.txt 2>&1; echo "swiglu profile rc=$?"
cat $P/*_profile.txt
mkdir -p $OUT/prof && cp $P/* $OUT/prof/ 2>/dev/null; OUT_SAVED=$OUT
GEN_LIMIT=${GEN_LIMIT:-300} bash benchmarks/gpu_calls/generate_set.sh \
  "llama_bf16=problems/level3/llama_decoder_block.py:--dtype bf16" "vision_attn_bf16=$W/31_VisionAttention.py:--dtype bf16" \
  "swiglu_mlp_bf16=problems/level3/swiglu_mlp.py:--dtype bf16"
tar czf $OUT_SAVED/profiles.tgz -C $OUT_SAVED prof && rm -rf $OUT_SAVED/prof
