#!/usr/bin/env bash
# GPU call 3 of 2026-12-02 (fifth session): the cheaters' GPU tier alone (its module fixture judges all 47
# candidates in 4 threads; under xdist every worker built it again, and call 2's four workers finished none in 200 s),
# verbose; beside it, the written-out attention test that failed in call 2 (causal_masked_bf16), with its traceback.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ)"
T0=$(date +%s)
timeout ${ATT_LIMIT:-240} python3 -m pytest -v -p no:cacheprovider -m gpu -rfE --tb=long \
  "tests/test_codegen_attention.py::test_gpu_written_out_attention_passes_the_referee" -k "causal_masked_bf16" \
  > $OUT/gpu_attention.txt 2>&1 &
timeout ${TEST_LIMIT:-480} python3 -m pytest -v -p no:cacheprovider -m gpu -rfE --tb=short --durations=10 \
  tests/test_verify_cheaters.py > $OUT/gpu_cheaters.txt 2>&1
echo "cheaters rc=$? $(( $(date +%s) - T0 )) s"; wait; echo "attention done $(( $(date +%s) - T0 )) s"
for f in $OUT/gpu_attention.txt $OUT/gpu_cheaters.txt; do echo "== $f"; grep -E "^(FAILED|ERROR)|passed|failed" $f | cut -c1-400 | tail -15
  echo "results: $(grep -cE ' PASSED' $f) passed, $(grep -cE ' FAILED' $f) failed"; done
grep -E "^E " $OUT/gpu_attention.txt | cut -c1-600 | head -20
