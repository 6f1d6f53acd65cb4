#!/usr/bin/env bash
# GPU call 4 of the sixth session of 2026-12-05: call 3's bench again (the same rule sample of KernelBench levels 1-2,
# fp32, 6 jobs, benchmarks/work/kbg carried) after the referee's warm-up run outside the GPU lock and the in-process
# torch.compile baseline (TORCHINDUCTOR_COMPILE_THREADS=1 in the candidate process): the judge's phases per problem
# (run, timing, gpu lock wait) against call 3's. Before it, the GPU tests of the referee (pytest -m gpu, verify files).
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05f_call4.sh   (carry ["benchmarks/work/kbg"])
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu -x tests/test_verify_memory.py tests/test_verify_warm.py \
  > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/gpu_tests.txt
SUITE=benchmarks/work/kbg PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-30} \
  TARGET=h100 TIMEOUT=${BENCH_LIMIT:-360} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/**/report.json', recursive=True):
    r = json.load(open(f)); v = r.get('verdict') or {}
    print(f.split('/')[-2], round(r.get('wall_s') or 0), r.get('stage_s'), v.get('phase_s'), r.get('status'), v.get('passed'))
PY
cp /tmp/kb-bench/*/bench.rows.jsonl $OUT/ 2>/dev/null
tar czf $OUT/kb_bench.tgz --exclude='*.sqlite' -C /tmp kb-bench 2>/dev/null
