#!/usr/bin/env bash
# GPU call of 2026-12-03 (second session), one lent H200, four parts at once (timed sections share the per-GPU lock;
# the attention benchmark runs first, alone):
#  1. attention (#20): benchmarks/attention.py, our kernel at the sm_90 seeds vs eager (PyTorch's fused SDPA) and
#     torch.compile, bf16;
#  2. long rows (#18 item 3): `kerntailor bench` over benchmarks/work/longrows (softmax and log-softmax over 4096 rows
#     of 393,216, KernelBench 39_L2Norm_ and 35_GroupNorm_, copied unchanged), fp32 and bf16;
#  3. Ray (#22 item 4): benchmarks/gpu_calls/ray_small_suite.sh (local bench vs `bench --ray` of a small suite);
#  4. optimize (#21 item 2): `kerntailor optimize` on problems/level3/llama_decoder_block.py, bf16.
# Carry: benchmarks/work/longrows, .ray-bundle.
export PYTHONPATH=src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader | tee $OUT/env.txt
python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])" | tee -a $OUT/env.txt
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)" | tee -a $OUT/env.txt
T0=$(date +%s)
timeout ${ATTN_LIMIT:-170} python3 benchmarks/attention.py --dtype ${ATTN_DTYPES:-bf16} --only sdpa,causal_sdpa,gqa \
  --configs ${ATTN_CONFIGS:-seeds} --deadline-s $(( ${ATTN_LIMIT:-170} - 40 )) --out $OUT/attention > $OUT/attention.log 2>&1
echo "attention rc=$? $(( $(date +%s) - T0 )) s" | tee -a $OUT/env.txt
(KT_COMMIT=$KT_COMMIT STRATEGY=${STRATEGY:-evolutionary} SUITE=benchmarks/work/longrows JOBS=${JOBS:-3} CANDIDATES=${CANDIDATES:-4} BUDGET=${BUDGET:-30} \
  BENCH_LIMIT=${BENCH_LIMIT:-330} bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $OUT/longrows.txt 2>&1; \
  echo "longrows done $(( $(date +%s) - T0 )) s" >> $OUT/env.txt) &
(OUT=$OUT/ray ONLY="--only relu --only layernorm" ARGS="--target h200 --candidates 2 --budget 10" RUN_LIMIT=${RAY_LIMIT:-150} \
  bash benchmarks/gpu_calls/ray_small_suite.sh > $OUT/ray.txt 2>&1; echo "ray done $(( $(date +%s) - T0 )) s" >> $OUT/env.txt) &
(KERNTAILOR_HOME=/tmp/kt-opt timeout ${OPT_LIMIT:-300} python3 -m kerntailor optimize problems/level3/llama_decoder_block.py \
  --target h200 --dtype bf16 --top 3 --budget 60 --candidates 4 --out /tmp/opt --json > $OUT/optimize.json 2> $OUT/optimize.log; \
  echo "optimize rc=$? $(( $(date +%s) - T0 )) s" >> $OUT/env.txt; cp /tmp/opt/optimize.json $OUT/optimize_report.json 2>/dev/null) &
wait
cat $OUT/env.txt; tail -25 $OUT/attention.log; tail -40 $OUT/longrows.txt; tail -15 $OUT/ray.txt; tail -c 1500 $OUT/optimize.log
