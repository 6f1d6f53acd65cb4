#!/usr/bin/env bash
# GPU call 1 of 2026-12-03 (third session): (1) what Inductor emits for two level-2 conv + tail files (how it lays
# out the convolution: #19), (2) attention in fp32, never measured (#20), (3) KernelBench level 1's memory-bound
# files that no call reached: 13 fp32 (the activations wait for call 2) and 3 bf16 (#18). One archive back.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/inductor $R/l1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
[ -n "${ONLY_L1:-}" ] || {
for f in 69_Conv2d_HardSwish_ReLU 54_Conv2d_Multiply_LeakyReLU_GELU; do
  TORCH_LOGS=output_code timeout 90 python3 benchmarks/gpu_calls/inductor_output_code.py benchmarks/work/kb/level2/$f.py \
    > $R/inductor/$f.out 2> $R/inductor/$f.code.txt; done
echo "inductor done $(( $(date +%s) - T0 )) s" >> $R/env.txt
timeout ${ATT_LIMIT:-170} python3 benchmarks/attention.py --dtype fp32 --only sdpa,causal_sdpa,gqa --configs grid \
  --out $R/attention > $R/attention.log 2>&1; echo "attention rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt; }
OUT=$R/l1 KT_COMMIT=${KT_COMMIT:-unknown} SUITE_fp32=benchmarks/work/kb1c_fp32 SUITE_bf16=benchmarks/work/kb1c_bf16 \
  JOBS=${JOBS:-3} CANDIDATES=3 BUDGET=20 BENCH_LIMIT=${BENCH_LIMIT:-300} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1.txt 2>&1 < /dev/null
mv $R/l1.txt $R/l1/summary.txt
echo "all done $(( $(date +%s) - T0 )) s" >> $R/env.txt
tar czf $OUT/results.tgz -C /tmp results
cat $R/env.txt; tail -c 2500 $R/attention.log; tail -c 5000 $R/l1/summary.txt
