#!/usr/bin/env bash
# GPU call 1 of the seventh session of 2026-12-05: the sixth session's call-4 bench again
# (the same rule sample of KernelBench levels 1-2,
# fp32, 6 jobs, benchmarks/work/kbg carried), now with the GPU lock's holder named in the judge's phase_s ("gpu lock
# wait behind ...") and a second pass's first_pass seconds in its report: where #14's per-problem minutes go.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05g_call1.sh   (carry ["benchmarks/work/kbg"])
# Cut at 500 s (BENCH_LIMIT).
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu -x tests/test_verify_memory.py tests/test_verify_warm.py tests/test_first_pass_lost.py \
  > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/gpu_tests.txt
SUITE=benchmarks/work/kbg PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-30} \
  TARGET=${TARGET:-h100} TIMEOUT=${BENCH_LIMIT:-500} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/**/report.json', recursive=True):
    r = json.load(open(f)); v = r.get('verdict') or {}
    print(f.split('/')[-2], round(r.get('wall_s') or 0), r.get('stage_s'), v.get('phase_s'), r.get('first_pass'), r.get('status'), v.get('passed'))
PY
cp /tmp/kb-bench/*/bench.rows.jsonl $OUT/ 2>/dev/null
tar czf $OUT/kb_bench.tgz --exclude='*.sqlite' -C /tmp kb-bench 2>/dev/null
