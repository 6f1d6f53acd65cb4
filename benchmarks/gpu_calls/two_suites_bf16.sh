#!/usr/bin/env bash
# Two `kerntailor bench --part all` suites at once, one per GPU of an nvidia-h200-x2 (CUDA_VISIBLE_DEVICES 0 and 1;
# each its own store home and work folder), bf16, `--precision ieee --candidates ${CANDIDATES:-2} --budget
# ${BUDGET:-20} --strategy random --jobs ${JOBS:-4}`, each cut at BENCH_LIMIT s (default 480); rows written as each
# problem ends, then rows_summary.py over both. On one GPU the suites run one after the other; SUITE_B may be left out.
# Written 2026-12-04 (third session) for level 1's 35 convolutions split in two halves (issue #19's plain-conv line):
#   mkdir -p benchmarks/work/l1conv_{a,b}/level1; ls ../shared/kernelbench/level1 | grep -i conv, every other file
#   into each half (copied unchanged); carry ["benchmarks/work/l1conv_a", "benchmarks/work/l1conv_b"];
#   SUITE_A=benchmarks/work/l1conv_a SUITE_B=benchmarks/work/l1conv_b bash benchmarks/gpu_calls/two_suites_bf16.sh
# Results under $OUT/{a,b} (rows_bf16.jsonl, summary.txt, bench_bf16/: json, store, kernels) and $OUT/env.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
O=$OUT; T0=$(date +%s)
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $O/env.txt
GPUS=$(python3 -c "import torch; print(torch.cuda.device_count())")
one() {   # $1 a or b, $2 suite, $3 GPU index
  local R=$O/$1 W=/tmp/kb-two-$1 H=/tmp/kt-home-two-$1
  rm -rf $W $H; mkdir -p $R
  CUDA_VISIBLE_DEVICES=$3 KERNTAILOR_HOME=$H SUITE=$2 PART=all DTYPES=bf16 PRECISION=ieee AGAIN=0 JOBS=${JOBS:-4} \
    CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-480} WORK=$W \
    bash benchmarks/bench_suite.sh $R/bench_bf16 > $R/suite_bf16.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $O/env.txt
  cp $W/bf16/bench.rows.jsonl $R/rows_bf16.jsonl 2>/dev/null; cp $W/log_bf16.txt $R/ 2>/dev/null
  python3 benchmarks/gpu_calls/rows_summary.py $R/rows_bf16.jsonl > $R/summary.txt 2>&1
  rm -rf $W $H
}
if [ "$GPUS" -ge 2 ] && [ -n "${SUITE_B:-}" ]; then
  one a "${SUITE_A:?}" 0 & one b "$SUITE_B" 1 & wait
else   # one GPU: SUITE_B (if any) after SUITE_A
  one a "${SUITE_A:?}" 0; [ -n "${SUITE_B:-}" ] && one b "$SUITE_B" 0
fi
cat $O/env.txt; cat $O/*/summary.txt | cut -c1-260
