#!/usr/bin/env bash
# For the next GPU call (written 2026-12-06, second session; not yet run): (1) level-3 2_ShallowWideMLP, whose
# long-K fp32 loop (K = 1,048,579 edge case) has never been judged on a GPU (cut twice at 200 s beside other jobs),
# alone with level-2 92 (cut in its library path's judgement at 238 s), at --jobs 2; (2) the whole 11-file level-2
# rule sample at --jobs 6 with the edge cases' GPU allowance and its bytes term, for one clean per-problem wall time.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-06b_next.sh
#   carry ["benchmarks/work/fixes2", "benchmarks/work/kbh"]; prepare benchmarks/work/fixes2 on the lead's machine:
#   mkdir -p benchmarks/work/fixes2/level2 benchmarks/work/fixes2/level3
#   cp ../shared/kernelbench/level3/2_ShallowWideMLP.py benchmarks/work/fixes2/level3/
#   cp ../shared/kernelbench/level2/92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp.py benchmarks/work/fixes2/level2/
#   benchmarks/work/kbh: python benchmarks/kernelbench_sample.py ../shared/kernelbench benchmarks/work/kbh --every 8 --offset 5 --levels level2
# Cut at FIX_LIMIT (200 s) and BENCH_LIMIT (330 s); what ran is in $OUT (rows, progress journals, reports).
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
SUITE=benchmarks/work/fixes2 PART=all DTYPES=fp32 AGAIN=0 JOBS=2 CANDIDATES=2 BUDGET=20 \
  TIMEOUT=${FIX_LIMIT:-200} WORK=/tmp/kb-fixes bash benchmarks/bench_suite.sh $OUT/fixes > $OUT/fixes.log 2>&1
echo "fixes done $(( $(date +%s) - T0 )) s"
python3 benchmarks/gpu_calls/rows_summary.py /tmp/kb-fixes/fp32/bench.rows.jsonl /tmp/kb-fixes/fp32/bench.progress.jsonl
SUITE=benchmarks/work/kbh PART=all DTYPES=fp32 AGAIN=0 JOBS=6 CANDIDATES=3 BUDGET=30 \
  TIMEOUT=${BENCH_LIMIT:-330} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "sample done $(( $(date +%s) - T0 )) s"
python3 benchmarks/gpu_calls/rows_summary.py /tmp/kb-bench/fp32/bench.rows.jsonl /tmp/kb-bench/fp32/bench.progress.jsonl
for d in kb-fixes kb-bench; do
  cp /tmp/$d/fp32/bench.rows.jsonl $OUT/$d.rows.jsonl 2>/dev/null
  gzip -c /tmp/$d/fp32/bench.progress.jsonl > $OUT/$d.progress.jsonl.gz
  (cd /tmp/$d && find . -name report.json | tar czf $OUT/$d.reports.tgz -T -)
done
