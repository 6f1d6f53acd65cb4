#!/usr/bin/env bash
# GPU call 2 of 2026-12-03 (third session): (1) the long-row probe (#18 item 3: where the windowed split's time
# goes), alone on the GPU; (2) fp32 attention under the tf32x3 policy (#20; ieee ran 10x slower than eager in
# call 1); (3) optimize's GPU tests (the CUDA-graph variant, #21); (4) 37_FrobeniusNorm_ and 43_Max_Pooling_3D in
# fp32 again after the compensated sum (d53b2f1) and the allocation out-of-memory retry (call 1's failures); (5) the
# library convolution's layout (conv_layout.py: NCHW, channels-last with its output kept, eager, compile; #19).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/l1 $R/probe
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
timeout ${PROBE_LIMIT:-130} python3 benchmarks/longrow_probe.py --out $R/probe/longrow_probe.json > $R/probe/probe.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
timeout ${ATT_LIMIT:-80} python3 benchmarks/attention.py --dtype fp32 --precision tf32x3 --only sdpa,gqa,causal_sdpa \
  --configs grid --out $R/attention > $R/attention.log 2>&1; echo "attention rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
timeout ${CONV_LIMIT:-130} python3 benchmarks/conv_layout.py benchmarks/work/kb/level2/{65,35,54,69,91}_*.py \
  --deadline-s 100 --out $R/conv_layout_fp32.json > $R/conv_layout.log 2>&1; echo "conv layout rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_optimize_cost.py \
  > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
OUT=$R/l1 DTYPES=fp32 SUITE_fp32=benchmarks/work/kb1e_fp32 JOBS=${JOBS:-2} CANDIDATES=3 BUDGET=20 \
  BENCH_LIMIT=${BENCH_LIMIT:-150} bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1/summary.txt 2>&1 < /dev/null
echo "all done $(( $(date +%s) - T0 )) s" >> $R/env.txt
tar czf $OUT/results.tgz -C /tmp results
cat $R/env.txt; tail -c 4000 $R/probe/probe.log; tail -c 1200 $R/gpu_tests.log; grep -h '^{' $R/attention.log | cut -c1-600; tail -c 3000 $R/l1/summary.txt; tail -c 2500 $R/conv_layout.log
