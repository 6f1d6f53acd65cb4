#!/usr/bin/env bash
# Issue #20 item 3 (branch attnpro): attention schedules that fit when k has a prologue. On the H200 (2026-12-05) the
# attention search of rope_sdpa and llama_decoder_block (bf16) kept one of five seeds: two TMA seeds codegen refuses
# for a computed k, 128x128 and 128x64 at 3 stages over the shared memory (480 / 256 KiB). Now the LDS estimate counts
# the tiles k's prologue loads a key step (KLOADS 5 for RoPE; equal to the sm_90 builds at 2-4 stages), the space
# offers TMA 0 only there, and the Hopper seeds are 128x128/8w/1 stage, 128x64/8w/2, 128x32/8w/3 and 128x32/8w/2 (all
# cross-compiled within the 227 KiB; 128x128/1 stage spills 104 B). Expect every seed to build and be timed; the log's
# "attention" lines (also in $OUT/attention_search.txt) say which won.
# One call: `kerntailor generate --dtype bf16` (eager and torch.compile timed beside it) through generate_set.sh on
#  - tests/data/attention/rope_sdpa.py at a Llama size (B 2, T 2048, hidden 2048, 16 heads of 128; made here by sed),
#  - problems/level3/llama_decoder_block.py,
# both at once, each cut at GEN_LIMIT s (default 420: the call stays under 500 s). No carry needed.
#   KT_COMMIT=<sha> bash benchmarks/gpu_calls/attnpro_call.sh
# Results: $OUT/results.tgz (logs, inspect output, report.json/md, kernel.py), $OUT/summary.txt, $OUT/attention_search.txt.
#
# A/B of the attention kernel alone (a second call): benchmarks/attn_prologue_modules.py writes the same problem with
# RoPE computed in the attention's loads of q and k ("qk", under the schedules above), of q only ("q", k's RoPE its own
# kernel, TMA allowed) and of neither, then benchmarks/libtail_profile.py times each module's kernels under
# torch.profiler beside eager and torch.compile:
#   export PYTHONPATH=src; W=/tmp/attnab; mkdir -p $W
#   sed -e 's/^seq = 37$/seq = 2048/' -e 's/^hidden = 256$/hidden = 2048/' -e 's/^heads = 2$/heads = 16/' \
#     -e 's/^max_seq = 64$/max_seq = 4096/' tests/data/attention/rope_sdpa.py > $W/rope_sdpa_2k.py
#   python3 benchmarks/attn_prologue_modules.py $W/rope_sdpa_2k.py $W/modules --dtype bf16 --arch sm_90
#   python3 benchmarks/libtail_profile.py $W/rope_sdpa_2k.py $W/modules/*.py --dtype bf16 --out $OUT/attn_ab.json
W=/tmp/attnpro; rm -rf $W; mkdir -p $W
sed -e 's/^seq = 37$/seq = 2048/' -e 's/^hidden = 256$/hidden = 2048/' -e 's/^heads = 2$/heads = 16/' \
  -e 's/^max_seq = 64$/max_seq = 4096/' tests/data/attention/rope_sdpa.py > $W/rope_sdpa_2k.py
GEN_LIMIT=${GEN_LIMIT:-420} bash benchmarks/gpu_calls/generate_set.sh \
  "rope_sdpa_2k_bf16=$W/rope_sdpa_2k.py:--dtype bf16" \
  "llama_decoder_block_bf16=problems/level3/llama_decoder_block.py:--dtype bf16"
grep -H -i "attention\|attn" /tmp/genset/*.log > $OUT/attention_search.txt 2>&1
cat $OUT/attention_search.txt
