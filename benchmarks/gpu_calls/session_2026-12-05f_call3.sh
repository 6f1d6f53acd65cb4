#!/usr/bin/env bash
# GPU call 3 of the sixth session of 2026-12-05: `kerntailor bench` (bench_suite.sh, fp32 as KernelBench measures,
# TARGET the H100) on a rule sample of KernelBench levels 1 and 2, unchanged files never benched before: every 16th
# file of each level from index 11 (benchmarks/kernelbench_sample.py ../shared/kernelbench benchmarks/work/kbg
# --every 16 --offset 11 --levels level1 level2: 11 files), carried; 6 jobs; cut at BENCH_LIMIT s (rows kept).
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05f_call3.sh   (carry ["benchmarks/work/kbg"])
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
SUITE=benchmarks/work/kbg PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-30} \
  TARGET=h100 TIMEOUT=${BENCH_LIMIT:-540} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/bench.rows.jsonl'):
    for line in open(f):
        r = json.loads(line)
        print(r.get('problem'), r.get('status'), r.get('correct'), r.get('time_us'), r.get('eager_us'), r.get('compile_us'),
              r.get('seconds'), (r.get('message') or r.get('error') or '')[:160])
PY
cp /tmp/kb-bench/*/bench.rows.jsonl $OUT/ 2>/dev/null
tar czf $OUT/kb_bench.tgz --exclude='*.sqlite' -C /tmp kb-bench 2>/dev/null; ls -la $OUT
