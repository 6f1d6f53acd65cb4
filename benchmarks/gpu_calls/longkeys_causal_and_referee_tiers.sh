#!/usr/bin/env bash
# GPU call 3 of 2026-12-02 (third session), main after the famreg, causalfast and longkeys merges: the written-out
# attention referee tests on the GPU (where_keep at 2^20 + 3 keys: fp32 key chunks), the attention benchmark for
# causal_attention_masked (now causal=True: blocks above the diagonal skipped), then the referee's GPU tiers
# (cheaters, guards) not run since the custom-op merge.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
echo "commit ${KT_COMMIT:-unknown}"
T0=$(date +%s)
timeout ${ATT_TEST_LIMIT:-120} python3 -m pytest -q -p no:cacheprovider -m gpu -rA --tb=line \
  tests/test_codegen_attention.py -k "where_keep or causal_masked_fp32" > $OUT/gpu_attention_tests.txt 2>&1
echo "attention gpu tests rc=$? $(( $(date +%s) - T0 )) s"; grep -E "^(PASSED|FAILED|ERROR)|passed|failed|Error" $OUT/gpu_attention_tests.txt | cut -c1-400 | tail -8
timeout ${ATT_LIMIT:-110} python3 benchmarks/attention.py --dtype bf16 --only causal_masked --deadline-s 60 \
  --out $OUT/attention > $OUT/attention.log 2>&1
echo "attention bench rc=$? $(( $(date +%s) - T0 )) s"
python3 - $OUT/attention/attention_bf16.json <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["problem"], {k: round(v, 1) for k, v in r["times_us"].items()}, "floor", round(r["floor"]["us"], 1))
PY
timeout ${TEST_LIMIT:-200} python3 -m pytest -q -p no:cacheprovider -m gpu -rA --tb=line \
  tests/test_verify_cheaters.py tests/test_codegen_guards.py > $OUT/gpu_tests.txt 2>&1
echo "referee gpu tiers rc=$? $(( $(date +%s) - T0 )) s"; grep -E "^(FAILED|ERROR)|passed|failed" $OUT/gpu_tests.txt | cut -c1-300 | tail -8
