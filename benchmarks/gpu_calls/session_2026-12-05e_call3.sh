#!/usr/bin/env bash
# GPU call 3 of the fifth session of 2026-12-05, on an H100 (the machine lent):
#  1. benchmarks/guard_overhead.py --target h100: forward() against the op and the bare launches, per variant, now
#     that forward() calls _launch_kernels itself in eager (71db5b5); the 2026-12-02 H200 run had forward() = op.
#  2. `kerntailor bench` (bench_suite.sh, fp32, TARGET h100) on a rule sample of KernelBench, unchanged files:
#     every 20th file of each level from index 7 (benchmarks/kernelbench_sample.py ../shared/kernelbench
#     benchmarks/work/kb20 --every 20 --offset 7: 12 files), carried; cut at BENCH_LIMIT s (rows kept).
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05e_call3.sh   (carry ["benchmarks/work/kb20"])
export PYTHONPATH=src PYTHONUNBUFFERED=1
T0=$(date +%s)
timeout 120 python3 benchmarks/guard_overhead.py --target h100 --repeats 3 --out $OUT/guard_overhead_h100.json \
  > $OUT/guard_overhead.log 2>&1; echo "guard_overhead rc=$? $(( $(date +%s) - T0 )) s"; tail -14 $OUT/guard_overhead.log
SUITE=benchmarks/work/kb20 PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-4} BUDGET=${BUDGET:-30} \
  TARGET=h100 TIMEOUT=${BENCH_LIMIT:-330} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/bench.rows.jsonl'):
    for line in open(f):
        r = json.loads(line)
        print(r.get('problem'), r.get('status'), r.get('time_us'), r.get('eager_us'), r.get('compile_us'), (r.get('message') or r.get('reason') or '')[:150])
PY
tar czf $OUT/kb_bench.tgz -C /tmp kb-bench 2>/dev/null; ls $OUT
