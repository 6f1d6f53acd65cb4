#!/usr/bin/env bash
# For the next GPU call: this session's two referee fixes on the files that met them on an H100 (2026-12-06), not
# yet run on a GPU: level-2 77 (a reference whose cuDNN kernels round differently run to run: judged with a note,
# no longer refused as random) and level-3 2_ShallowWideMLP (its K = 1,048,579 edge case: the long-K fp32 loop), then
# the rest of that day's conv-heavy level-2 sample, all through `bench` in fp32, measured, with the progress journal.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-06_next.sh
#   carry ["benchmarks/work/fixes", "benchmarks/work/kbh"]; prepare benchmarks/work/fixes on the lead's machine:
#   mkdir -p benchmarks/work/fixes/level2 benchmarks/work/fixes/level3
#   cp ../shared/kernelbench/level2/77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool.py benchmarks/work/fixes/level2/
#   cp ../shared/kernelbench/level3/2_ShallowWideMLP.py benchmarks/work/fixes/level3/
# Cut at FIX_LIMIT (240 s) and BENCH_LIMIT (300 s).
# Run so at ae342e7 (2026-12-06, benchmarks/data/h100_2026-12-06b/call1). FIXES (default benchmarks/work/fixes) names
# the first stage's folder: the next call (not yet run) is FIXES=benchmarks/work/fixes2 with level-3
# 2_ShallowWideMLP (its long-K loop never judged on a GPU: cut at 200 s twice) and level-2
# 92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp (cut in its library path's judgement), copied from
# ../shared/kernelbench as above; carry it and benchmarks/work/kbh. The journals now carry the referee's cases.
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
SUITE=${FIXES:-benchmarks/work/fixes} PART=all DTYPES=fp32 AGAIN=0 JOBS=2 CANDIDATES=2 BUDGET=20 \
  TIMEOUT=${FIX_LIMIT:-240} WORK=/tmp/kb-fixes bash benchmarks/bench_suite.sh $OUT/fixes > $OUT/fixes.log 2>&1
echo "fixes done $(( $(date +%s) - T0 )) s"
python3 benchmarks/gpu_calls/rows_summary.py /tmp/kb-fixes/fp32/bench.rows.jsonl /tmp/kb-fixes/fp32/bench.progress.jsonl
grep -h '"note"' /tmp/kb-fixes/fp32/*/*/report.json 2>/dev/null | head -5
SUITE=benchmarks/work/kbh PART=all DTYPES=fp32 AGAIN=0 JOBS=6 CANDIDATES=3 BUDGET=30 \
  TIMEOUT=${BENCH_LIMIT:-300} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "sample done $(( $(date +%s) - T0 )) s"
python3 benchmarks/gpu_calls/rows_summary.py /tmp/kb-bench/fp32/bench.rows.jsonl /tmp/kb-bench/fp32/bench.progress.jsonl
for d in kb-fixes kb-bench; do
  cp /tmp/$d/fp32/bench.rows.jsonl $OUT/$d.rows.jsonl 2>/dev/null; cp /tmp/$d/fp32/bench.progress.jsonl $OUT/$d.progress.jsonl
  (cd /tmp/$d && find . -name report.json -o -name report.md -o -name '*.txt' | tar czf $OUT/$d.reports.tgz -T -)
done
