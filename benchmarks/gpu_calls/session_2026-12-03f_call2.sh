#!/usr/bin/env bash
# GPU call 2 of 2026-12-03 (fifth session), after call 1's fixes and the merge of conv1x1: (1) `kerntailor bench` on
# fp32 93_masked_cumsum (the scan prologue), 43_Max_Pooling_3D (the host reference's device) and bf16 100_HingeLoss
# (no Kahan for 16-bit sums), suites copied unchanged; beside it (2) fp32 22_Tanh alone under `generate -v` (it
# never finished a bench row: where does it stall?); then (3) coop_probe.py's cooperative lines (the narrower partials
# tile); (4) conv_pointwise_probe.sh (the 1x1 pointwise form, #19).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/l1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
( timeout ${TANH_LIMIT:-200} python3 -m kerntailor generate benchmarks/work/kb/level1/22_Tanh.py --target h200 --budget 20 \
    --candidates 3 --out $R/tanh22 --no-store -v > $R/tanh22.log 2>&1; echo "tanh rc=$?" >> $R/tanh22.log ) &
OUT=$R/l1 KT_COMMIT=${KT_COMMIT:-unknown} SUITE_fp32=benchmarks/work/kb1g_fp32 SUITE_bf16=benchmarks/work/kb1g_bf16 \
  JOBS=2 CANDIDATES=3 BUDGET=20 BENCH_LIMIT=${BENCH_LIMIT:-200} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1/summary.txt 2>&1 < /dev/null
wait
pack l1 $?
timeout ${COOP_LIMIT:-60} python3 benchmarks/coop_probe.py --schedules coop --max-wall 50 --out $R/coop.json > $R/coop.log 2>&1
pack coop $?
OUT=$R/conv LIMIT=${CONV_LIMIT:-200} DEADLINE_S=${CONV_DEADLINE:-150} bash benchmarks/gpu_calls/conv_pointwise_probe.sh > $R/conv_summary.txt 2>&1
pack conv $?
cat $R/env.txt; grep -v "^   wait" $R/l1/summary.txt | tail -6 | cut -c1-260; tail -25 $R/tanh22.log | cut -c1-200
tail -c 1200 $R/coop.log; cat $R/conv_summary.txt | tail -14
