#!/usr/bin/env bash
# Issue #19/#14, written 2026-12-04 (second session), not yet run: re-measure the files whose library conv paid torch's
# permuted channels-last copy of its input (582 us of 1348 on 31_Conv2d_Min_Add_Multiply, H200, call 3 of that session)
# after 8984625 (the copy by a tiled Triton kernel kernel.py defines): (1) `kerntailor bench --part all` in bf16 over
# level-2 17, 31, 35, 46 (benchmarks/work/kbl2lose/level2, copied unchanged), `--jobs 4 --candidates 2 --budget 20`,
# cut at BENCH_LIMIT s (default 300); (2) benchmarks/libtail_profile.py on 31 with the module (1) emits (its
# generated.py: library conv + tail, whichever was emitted), beside eager and compile.
# Prepare: mkdir -p benchmarks/work/kbl2lose/level2 && for n in 17 31 35 46; do
#   cp ../shared/kernelbench/level2/${n}_Conv2d_*.py benchmarks/work/kbl2lose/level2/; done
# Run from the repository root with carry ["benchmarks/work/kbl2lose"]; results under $OUT.
export PYTHONPATH=src PYTHONUNBUFFERED=1
O=$OUT; R=/tmp/results-lose; W=/tmp/kb-lose; H=/tmp/kt-home-lose; rm -rf $R $W $H; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
KERNTAILOR_HOME=$H SUITE=benchmarks/work/kbl2lose PART=all DTYPES=bf16 PRECISION=ieee AGAIN=0 JOBS=${JOBS:-4} \
  CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-300} WORK=$W \
  bash benchmarks/bench_suite.sh $R/bench_bf16 > $R/suite_bf16.log 2>&1
echo "bench rc=$?" >> $R/env.txt
cp $W/bf16/bench.rows.jsonl $R/rows_bf16.jsonl 2>/dev/null; cp $W/log_bf16.txt $R/ 2>/dev/null
python3 benchmarks/gpu_calls/rows_summary.py $R/rows_bf16.jsonl > $R/summary.txt 2>&1
M=$(find $W -path '*31_Conv2d_Min_Add_Multiply*' -name generated.py | head -1)
[ -z "$M" ] && M=$(find $W -path '*31_Conv2d_Min_Add_Multiply*' -name kernel.py | head -1)
[ -n "$M" ] && timeout 100 python3 benchmarks/libtail_profile.py benchmarks/work/kbl2lose/level2/31_Conv2d_Min_Add_Multiply.py \
  "$M" --out $R/libtail_31.json > $R/libtail_31.log 2>&1
tar czf $O/results.tgz -C /tmp results-lose; cp $R/summary.txt $O/summary.txt
cat $R/env.txt $R/summary.txt; tail -20 $R/libtail_31.log 2>/dev/null
rm -rf $R $W $H
