#!/usr/bin/env bash
# GPU call 3 of the fourth session of 2026-12-04: two `kerntailor bench --part all` suites at once on ONE GPU (the
# stopwatch's lock and the memory ledger are files under /tmp, shared by both benches, so timed sections never
# overlap), each cut at BENCH_LIMIT s (default 520), rows written as each problem ends:
#  (A, #19/#14) level-2 17, 31, 35, 43, 46 in bf16 (the files whose two passes took 196-263 s at --jobs 4) after the
#      conv LIBRARY knob (library conv + generated tail timed in the one pass);
#  (B, #14) small level-3 models in fp32 (as KernelBench measures) after measured twins + the knob.
# Prepare (the device copy has no /work/shared), carry ["benchmarks/work/l2lose", "benchmarks/work/l3small"]:
#   mkdir -p benchmarks/work/l2lose/level2 benchmarks/work/l3small/level3
#   for n in 17 31 35 43 46; do cp ../shared/kernelbench/level2/${n}_*.py benchmarks/work/l2lose/level2/; done
#   for f in 4_LeNet5 2_ShallowWideMLP 3_DeepNarrowMLP 13_DenseNet121TransitionLayer 17_SqueezeNetFireModule \
#     8_ResNetBasicBlock 33_VanillaRNN; do cp ../shared/kernelbench/level3/$f.py benchmarks/work/l3small/level3/; done
export PYTHONPATH=src PYTHONUNBUFFERED=1
O=$OUT; T0=$(date +%s)
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $O/env.txt
one() {   # $1 name, $2 suite, $3 dtype
  local R=$O/$1 W=/tmp/kb-$1 H=/tmp/kt-home-$1
  rm -rf $W $H; mkdir -p $R
  KERNTAILOR_HOME=$H SUITE=$2 PART=all DTYPES=$3 PRECISION=ieee AGAIN=0 JOBS=${JOBS:-3} \
    CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-520} WORK=$W \
    bash benchmarks/bench_suite.sh $R/bench_$3 > $R/suite_$3.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $O/env.txt
  cp $W/$3/bench.rows.jsonl $R/rows_$3.jsonl 2>/dev/null; cp $W/log_$3.txt $R/ 2>/dev/null
  python3 benchmarks/gpu_calls/rows_summary.py $R/rows_$3.jsonl > $R/summary.txt 2>&1
  rm -f $R/bench_$3/store.sqlite; (cd $W && tar czf $R/reports_$3.tgz $(find . -name report.json) 2>/dev/null)
  rm -rf $W $H
}
one l2lose benchmarks/work/l2lose bf16 &
one l3small benchmarks/work/l3small fp32 &
wait
cat $O/env.txt; for s in l2lose l3small; do echo "== $s"; cut -c1-400 $O/$s/summary.txt; done
