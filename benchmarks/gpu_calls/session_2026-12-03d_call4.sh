#!/usr/bin/env bash
# GPU call 4 of 2026-12-03 (third session), the rest of its device budget: (1) the library convolution's layout again
# with the 2-D tiled tail (merge of cltile: channels-last, tile on / tile off, NCHW, eager, compile; #19); (2) the
# long-row softmax and log-softmax through `kerntailor bench` with the cooperative on-chip split in the search
# (merge of coop; #18 item 3), fp32 and bf16 at once. The archive is rewritten after each step.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/longrows
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
timeout ${CONV_LIMIT:-90} python3 benchmarks/conv_layout.py benchmarks/work/kb/level2/{69,54,91,65,35}_*.py \
  --deadline-s 60 --out $R/conv_layout_fp32.json > $R/conv_layout.log 2>&1
pack conv_layout $?
OUT=$R/longrows STRATEGY=${STRATEGY:-evolutionary} SUITE=benchmarks/work/longrows2 JOBS=2 CANDIDATES=${CANDIDATES:-4} \
  BUDGET=${BUDGET:-30} BENCH_LIMIT=${BENCH_LIMIT:-210} KT_COMMIT=${KT_COMMIT:-unknown} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/longrows/summary.txt 2>&1 < /dev/null
pack longrows $?
cat $R/env.txt; grep -h '"problem"' $R/conv_layout.log | cut -c1-200; tail -c 3500 $R/longrows/summary.txt
