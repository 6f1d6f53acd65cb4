#!/usr/bin/env bash
# GPU call 1 of 2026-12-02 (third session): the GPU tiers not run since the custom-op / edges / written-out
# attention merges, then the attention benchmark (bf16) with the written-out problems (causal_attention_masked,
# decode_attention) now generated as one flash-attention kernel each.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
python3 -c "import torch, triton, platform; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', platform.python_version())"
echo "commit ${KT_COMMIT:-unknown}"
T0=$(date +%s)
timeout ${TEST_LIMIT:-230} python3 -m pytest -q -p no:cacheprovider -m gpu --durations=10 \
  tests/test_codegen_attention.py tests/test_verify_cheaters.py tests/test_codegen_guards.py \
  tests/test_codegen_helpers.py tests/test_verify_memory.py tests/test_verify_sandbox.py > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; grep -E "passed|failed|error" $OUT/gpu_tests.txt | tail -5
timeout ${ATT_LIMIT:-200} python3 benchmarks/attention.py --dtype bf16 --only causal_masked,decode,sdpa \
  --deadline-s 150 --out $OUT/attention > $OUT/attention.log 2>&1
echo "attention rc=$? $(( $(date +%s) - T0 )) s"; tail -25 $OUT/attention.log
