#!/usr/bin/env bash
# GPU call 2 of 2026-12-02 (third session): the GPU tiers after the attention grid fix (one grid axis), then a
# rule-made sample of KernelBench level 3 (every 4th file, benchmarks/kernelbench_sample.py --every 4 --levels
# level3, carried as benchmarks/work/kb3) through `kerntailor bench` in fp32, cut at BENCH_LIMIT seconds.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
echo "commit ${KT_COMMIT:-unknown}"
T0=$(date +%s)
timeout ${TEST_LIMIT:-300} python3 -m pytest -q -p no:cacheprovider -m gpu --durations=15 -k "not where_keep" \
  tests/test_codegen_attention.py tests/test_codegen_guards.py tests/test_verify_cheaters.py \
  tests/test_codegen_helpers.py tests/test_verify_memory.py tests/test_verify_sandbox.py > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; grep -E "^(FAILED|ERROR)|passed|failed" $OUT/gpu_tests.txt | cut -c1-400 | tail -12
SUITE=${SUITE:-benchmarks/work/kb3} PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-4} CANDIDATES=${CANDIDATES:-4} \
  BUDGET=${BUDGET:-30} TIMEOUT=${BENCH_LIMIT:-240} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
cp /tmp/kb-bench/*/bench.rows.jsonl $OUT/ 2>/dev/null; cp /tmp/kb-bench/log_fp32.txt $OUT/ 2>/dev/null
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/bench.rows.jsonl'):
    for line in open(f):
        r = json.loads(line)
        print({k: r.get(k) for k in ('problem', 'status', 'decision', 'time_us', 'eager_us', 'compile_us', 'generated_groups')},
              (r.get('message') or r.get('reason') or '')[:160])
PY
