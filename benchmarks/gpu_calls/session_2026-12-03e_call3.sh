#!/usr/bin/env bash
# GPU call 3 of 2026-12-03 (fourth session), after the merge of poolfast: (1) the span pool schedule against the window
# of masked loads on KernelBench 41/44 (benchmarks/pool_probe.py, #18 item 4); (2) the pool tails of level2 65 and 35
# after a channels-last library convolution, channel-innermost (conv_layout.py, #19); (3) `kerntailor bench` on
# bf16 27_SELU_, 31_ELU (expm1 by exp for 16-bit outputs), 100_HingeLoss, 44_Average_Pooling_1D and fp32
# 37_FrobeniusNorm_, 43_Max_Pooling_3D (the fixes not re-run on a GPU), suites copied unchanged; (4) Llama-3.2-1B
# decode optimize again with graph mode after the empty-constant and sanity-bound fixes (hf_llama.sh, SHAPES=decode).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/l1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
timeout ${POOL_LIMIT:-100} python3 benchmarks/pool_probe.py --out $R/pool.json > $R/pool.log 2>&1
pack pool $?
timeout ${CONV_LIMIT:-75} python3 benchmarks/conv_layout.py benchmarks/work/kb/level2/{65,35}_*.py --deadline-s 50 \
  --out $R/conv_layout_pool_tails_fp32.json > $R/conv_layout.log 2>&1
pack conv_layout $?
OUT=$R/l1 KT_COMMIT=${KT_COMMIT:-unknown} SUITE_fp32=benchmarks/work/kb1e_fp32 SUITE_bf16=benchmarks/work/kb1e_bf16 \
  JOBS=2 CANDIDATES=3 BUDGET=20 BENCH_LIMIT=${BENCH_LIMIT:-170} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1/summary.txt 2>&1 < /dev/null
pack l1 $?
SHAPES=decode PROFILE=1 PROFILE_LIMIT=40 TOP_DECODE=${TOP_DECODE:-9} BUDGET=${OPT_BUDGET:-60} OPT_LIMIT=${OPT_LIMIT:-150} KT_COMMIT=${KT_COMMIT:-unknown} \
  bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf_llama $?
cat $R/env.txt; tail -c 2000 $R/pool.log; grep -h '"problem"' $R/conv_layout.log | cut -c1-300; grep -v "^   wait" $R/l1/summary.txt | tail -8 | cut -c1-250; tail -c 2500 $R/hf_llama.txt
