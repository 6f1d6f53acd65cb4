#!/usr/bin/env bash
# Committed copy of the script a GPU call of 2026-12-01 ran as .kbx/run3.sh (.kbx: seven KernelBench files copied
# from ../shared/kernelbench, listed in benchmarks/data/kernelbench_targeted_h200_fp32_2026-12-01.md; git-ignored).
# GPU call 3: GPU tests of what landed without a GPU, the special draw on a tf32x3 GEMM, then a targeted bench of
# few-row norms and conv tails (split rows, aligned rows) with each module's kernel profile
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
T0=$(date +%s)
timeout 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_codegen_helpers.py tests/test_verify_memory.py tests/test_codegen_guards.py > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/gpu_tests.txt
timeout 60 python3 -m kerntailor generate problems/level1/matmul_transposed_a.py --target h200 --precision tf32x3 --budget 15 --candidates 2 --no-store --out /tmp/tf32x3 > $OUT/tf32x3.txt 2>&1
echo "tf32x3 generate rc=$? $(( $(date +%s) - T0 )) s"; tail -4 $OUT/tf32x3.txt; grep -o '"reason": "[^"]*"' /tmp/tf32x3/report.json | head -2
python3 -m kerntailor bench .kbx --part all --target h200 --precision ieee --candidates 6 --budget 40 --strategy random --jobs 7 --out /tmp/kb-bench/fp32 > $OUT/bench_log.txt 2>&1 &
BP=$!; ( sleep ${BENCH_LIMIT:-290}; kill -TERM $BP 2>/dev/null ) & wait $BP
echo "bench done $(( $(date +%s) - T0 )) s"
python3 - <<'PY'
import json
for line in open('/tmp/kb-bench/fp32/bench.rows.jsonl'):
    r = json.loads(line)
    print(r.get('problem'), r.get('status'), r.get('time_us'), r.get('eager_us'), r.get('compile_us'), r.get('seconds'), (r.get('message') or '')[:160])
PY
cp /tmp/kb-bench/fp32/bench.rows.jsonl $OUT/bench.rows.jsonl
timeout ${PROFILE_LIMIT:-60} python3 benchmarks/profile_modules.py /tmp/kb-bench --json $OUT/profile.json > $OUT/profile.txt 2>&1
echo "profile rc=$? $(( $(date +%s) - T0 )) s"
tar czf $OUT/kernels.tgz -C /tmp/kb-bench --exclude='*.pyc' . 2>/dev/null
