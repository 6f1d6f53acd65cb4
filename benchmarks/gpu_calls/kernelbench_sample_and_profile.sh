#!/usr/bin/env bash
# Committed copy of the script a GPU call of 2026-12-01 ran as .kb8/run2.sh (SUITE: a sample made by
# benchmarks/kernelbench_sample.py, carried to the device; it is git-ignored here).
# GPU call: the KernelBench sample (levels 1+2 of .kb8) at the current commit, then where each module's time goes
export PYTHONPATH=src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
T0=$(date +%s)
if [ -n "${TESTS:-}" ]; then
  timeout ${TEST_LIMIT:-150} python3 -m pytest -q -p no:cacheprovider -m "interpreter or gpu" $TESTS > $OUT/gpu_tests.txt 2>&1
  echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -5 $OUT/gpu_tests.txt
fi
SUITE=${SUITE:-.kb8} PART=all DTYPES=${DTYPES:-fp32} AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-6} BUDGET=${BUDGET:-40} \
  TIMEOUT=${BENCH_LIMIT:-360} ONLY="${ONLY:-}" WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
for f in /tmp/kb-bench/*/bench.rows.jsonl; do echo "$f $(wc -l < $f) rows"; done
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/bench.rows.jsonl'):
    for line in open(f):
        r = json.loads(line)
        print(r.get('problem'), r.get('status'), r.get('time_us'), r.get('eager_us'), r.get('compile_us'), (r.get('message') or r.get('reason') or '')[:120])
PY
timeout ${PROFILE_LIMIT:-100} python3 benchmarks/profile_modules.py /tmp/kb-bench --json $OUT/profile.json > $OUT/profile.txt 2>&1
echo "profile rc=$? $(( $(date +%s) - T0 )) s"
