#!/usr/bin/env bash
# GPU call 1 of 2026-12-03 (fourth session): (1) fp32 ieee attention at small tiles (#20: the default 64x32 ran 9x
# slower than eager's efficient attention; Triton's fp32 ieee dot is an FMA loop, small tiles may suit it), and
# (2) the 11 KernelBench level 1 memory-bound fp32 files no call reached or whose fix was not re-run on a GPU
# (8 activations, 93_masked_cumsum, 37_FrobeniusNorm_ after the Kahan sum, 43_Max_Pooling_3D after the OOM retry),
# suite benchmarks/work/kb1d_fp32 (copied unchanged). One archive, rewritten after each step.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/l1 $R/attention
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
timeout ${ATT_LIMIT:-150} python3 benchmarks/attention.py --dtype fp32 --only sdpa,causal_sdpa \
  --configs ${ATT_CONFIGS:-16x32/4w/2s,32x32/4w/2s,32x32/2w/2s,32x64/4w/2s,64x32/4w/2s,16x64/4w/2s,32x16/2w/2s} \
  --out $R/attention > $R/attention.log 2>&1
pack attention $?
OUT=$R/l1 KT_COMMIT=${KT_COMMIT:-unknown} SUITE_fp32=benchmarks/work/kb1d_fp32 DTYPES=fp32 \
  JOBS=${JOBS:-2} CANDIDATES=3 BUDGET=20 BENCH_LIMIT=${BENCH_LIMIT:-400} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1/summary.txt 2>&1 < /dev/null
pack l1 $?
cat $R/env.txt; tail -c 3000 $R/attention.log; tail -c 5000 $R/l1/summary.txt
