#!/usr/bin/env bash
# GPU call 1 of 2026-12-03 (fifth session): #18's measurements not yet taken: `kerntailor bench` on fp32 22_Tanh,
# 32_HardTanh, 93_masked_cumsum (never finished in a suite's time), 43_Max_Pooling_3D (referee crash fixed, not
# re-run) and bf16 27_SELU_, 31_ELU (expm1 by exp for 16-bit outputs, not measured), 100_HingeLoss,
# 49_Max_reduction, 52_Argmin (suites copied unchanged from ../shared/kernelbench); then MobileNetV2's measured
# profile after the double-count fix (#21).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/l1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
OUT=$R/l1 KT_COMMIT=${KT_COMMIT:-unknown} SUITE_fp32=benchmarks/work/kb1f_fp32 SUITE_bf16=benchmarks/work/kb1f_bf16 \
  JOBS=3 CANDIDATES=3 BUDGET=20 BENCH_LIMIT=${BENCH_LIMIT:-300} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1/summary.txt 2>&1 < /dev/null
pack l1 $?
timeout ${PROFILE_LIMIT:-60} python3 -m kerntailor profile benchmarks/work/kb/level3/20_MobileNetV2.py --target h200 --top 5 \
  --out $R/profile_mobilenetv2 --json > $R/profile_mobilenetv2.json 2> $R/profile_mobilenetv2.log
pack profile_mobilenetv2 $?
cat $R/env.txt; grep -v "^   wait" $R/l1/summary.txt | tail -14 | cut -c1-260; tail -c 1500 $R/profile_mobilenetv2.log
