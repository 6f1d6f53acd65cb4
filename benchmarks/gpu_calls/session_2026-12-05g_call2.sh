#!/usr/bin/env bash
# GPU call 2 of the seventh session of 2026-12-05: a second rule sample, conv-heavy (every 8th file of KernelBench
# level 2 from index 5: 11 unchanged files, 9 with a convolution), through `bench --jobs 6` in fp32 after the outpaced
# rule and the abandoned first pass (8be1f35, 574f2b0): per-problem seconds, admission waits, first passes, verdicts.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05g_call2.sh   (carry ["benchmarks/work/kbh"]:
#   python benchmarks/kernelbench_sample.py ../shared/kernelbench benchmarks/work/kbh --every 8 --offset 5
#   --levels level2)
# Cut at BENCH_LIMIT (420 s).
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
SUITE=benchmarks/work/kbh PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-30} \
  TARGET=${TARGET:-h100} TIMEOUT=${BENCH_LIMIT:-420} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/**/report.json', recursive=True):
    r = json.load(open(f)); v = r.get('verdict') or {}
    print(f.split('/')[-2], round(r.get('wall_s') or 0), r.get('stage_s'), v.get('phase_s'), r.get('first_pass'),
          [o.get('ratio') for o in r.get('outpaced') or []], r.get('status'), v.get('passed'))
PY
cp /tmp/kb-bench/*/bench.rows.jsonl $OUT/ 2>/dev/null
tar czf $OUT/kb_bench.tgz --exclude='*.sqlite' -C /tmp kb-bench 2>/dev/null
