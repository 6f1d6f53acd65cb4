#!/usr/bin/env bash
# GPU call 1 of the second session of 2026-12-04 (#19, #18): (1) `kerntailor bench --part all` in bf16 over the 21
# level-2 files of ../shared/kernelbench that convolve (not transposed) and then reduce (benchmarks/work/kbl2tail/level2,
# copied unchanged; the list is in session_2026-12-04_call3.sh's header), now with the conv column tail and the
# derived-size refusal naming merged; `--jobs 3 --candidates 2 --budget 20`, cut at BENCH_LIMIT s (default 420);
# (2) coopknob_probe.sh (the cooperative softmax's REUSE x maxnreg knobs, fp32 and bf16, ~45 s).
# L2_SUITE picks another suite folder, COOP=0 skips (2). Run from the repository root with carry ["benchmarks/work/kbl2tail"]; results in $OUT/results.tgz and $OUT/coop_*.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; rm -rf $R /tmp/kt-home-l2 /tmp/kb-l2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
KERNTAILOR_HOME=/tmp/kt-home-l2 SUITE=${L2_SUITE:-benchmarks/work/kbl2tail} PART=all DTYPES=bf16 PRECISION=ieee AGAIN=0 \
  JOBS=${JOBS:-3} CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-420} \
  WORK=/tmp/kb-l2 bash benchmarks/bench_suite.sh $R/bench_bf16 > $R/suite_bf16.log 2>&1
cp /tmp/kb-l2/bf16/bench.rows.jsonl $R/rows_bf16.jsonl 2>/dev/null; cp /tmp/kb-l2/log_bf16.txt $R/ 2>/dev/null
rm -f $R/bench_bf16/kernels.tgz; (cd /tmp/kb-l2 && tar czf $R/kernels_bf16.tgz --exclude='*.sqlite' --exclude='*.pyc' . 2>/dev/null)
pack bench $?
python3 benchmarks/gpu_calls/rows_summary.py $R/rows_bf16.jsonl | tee $R/summary.txt
pack summary 0
[ "${COOP:-1}" = 1 ] && { bash benchmarks/gpu_calls/coopknob_probe.sh > $R/coop_summary.txt 2>&1; pack coop $?; }
cat $R/env.txt
rm -rf /tmp/kt-home-l2 /tmp/kb-l2
