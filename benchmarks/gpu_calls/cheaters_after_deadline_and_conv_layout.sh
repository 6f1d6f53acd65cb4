#!/usr/bin/env bash
# GPU call 4 of 2026-12-02 (fifth session): (a) the cheaters' GPU tier alone again, after the referee's Deadline
# (the judge's wait for the GPU's lock no longer counts) and the int32 edge's new order (2e64264);
# (b) benchmarks/conv_layout.py on a *targeted* selection (not a sample) of level-2 convolution files whose
# generated modules lost to torch.compile in the samples (carried as benchmarks/work/convsel): the library
# convolution on NCHW tensors vs channels-last copies, beside eager and torch.compile, fp32 as written.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ)"
T0=$(date +%s)
timeout ${TEST_LIMIT:-210} python3 -m pytest -v -p no:cacheprovider -m gpu -rfE --tb=line --durations=10 \
  tests/test_verify_cheaters.py > $OUT/gpu_cheaters.txt 2>&1
echo "cheaters rc=$? $(( $(date +%s) - T0 )) s: $(grep -cE ' PASSED' $OUT/gpu_cheaters.txt) passed, $(grep -cE ' FAILED' $OUT/gpu_cheaters.txt) failed"
grep -E "^(FAILED|E  )" $OUT/gpu_cheaters.txt | cut -c1-300 | head -20
timeout ${CONV_LIMIT:-160} python3 benchmarks/conv_layout.py benchmarks/work/convsel/65_*.py benchmarks/work/convsel/35_*.py \
  benchmarks/work/convsel/54_*.py benchmarks/work/convsel/69_*.py benchmarks/work/convsel/91_*.py \
  --out $OUT/conv_layout_h200_fp32.json --deadline-s ${CONV_DEADLINE:-110} > $OUT/conv_layout.log 2>&1
echo "conv layout rc=$? $(( $(date +%s) - T0 )) s"; cut -c1-600 $OUT/conv_layout.log | tail -8
