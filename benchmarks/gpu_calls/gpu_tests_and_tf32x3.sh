#!/usr/bin/env bash
# GPU call (2026-12-02, call 1): the GPU tests of work that landed without a GPU (helpers' tf32x3/_row_max forms,
# memory budget, guards, cheaters, gradients), then the special-values draw on a tf32x3 GEMM through `generate`.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
T0=$(date +%s)
python3 -c "import numpy, torch, triton; print('numpy', numpy.__version__, 'torch', torch.__version__, 'triton', triton.__version__)"
timeout ${TESTS_LIMIT:-330} python3 -m pytest -q -p no:cacheprovider -m gpu --durations=15 tests/test_codegen_helpers.py \
  tests/test_codegen_guards.py tests/test_codegen_grads.py tests/test_verify_cheaters.py tests/test_verify_memory.py \
  > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; grep -E "passed|failed|FAILED|ERROR" $OUT/gpu_tests.txt | tail -15
timeout ${TF32X3_LIMIT:-150} python3 -m kerntailor generate problems/level1/matmul_transposed_a.py --target h200 \
  --precision tf32x3 --budget 30 --candidates 2 --no-store --out /tmp/tf32x3 > $OUT/tf32x3.txt 2>&1
echo "tf32x3 generate rc=$? $(( $(date +%s) - T0 )) s"; tail -6 $OUT/tf32x3.txt
cp /tmp/tf32x3/report.json $OUT/tf32x3_report.json 2>/dev/null
python3 - <<'PY'
import json
try:
    r = json.load(open('/tmp/tf32x3/report.json'))
except OSError as e:
    print('no report', e); raise SystemExit
def walk(o, path=''):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ('verdict', 'reason', 'cases', 'status') and not isinstance(v, (dict, list)):
                print(path + '.' + k, str(v)[:200])
            walk(v, path + '.' + k)
    elif isinstance(o, list):
        for i, v in enumerate(o[:6]):
            walk(v, f'{path}[{i}]')
walk(r)
PY
