#!/usr/bin/env bash
# GPU call 3 (2026-12-02): what landed this session without a GPU. (1) the floor's read/write bandwidths and the
# check of the new floor (benchmarks/bandwidth.py); (2) GPU tests: custom op under torch.compile / CUDA graphs /
# reduce-overhead, streams, ceilings, attention compile tier, the edges stage, cheaters; (3) the per-call cost of
# forward's checks + the custom op (benchmarks/guard_overhead.py); (4) the generated attention kernels against eager
# SDPA, torch.compile and the floor (benchmarks/attention.py), bf16.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
T0=$(date +%s)
timeout 90 python3 benchmarks/bandwidth.py --out $OUT/bandwidth_h200.json > $OUT/bandwidth.txt 2>&1
echo "bandwidth rc=$? $(( $(date +%s) - T0 )) s"; tail -25 $OUT/bandwidth.txt
timeout ${TESTS_LIMIT:-200} python3 -m pytest -q -p no:cacheprovider -m "gpu or compile" --durations=10 \
  tests/test_customop_gpu.py tests/test_streams.py tests/test_measure.py tests/test_codegen_attention.py \
  tests/test_verify_edges.py > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; grep -E "passed|failed|FAILED|ERROR|Error" $OUT/gpu_tests.txt | tail -15
timeout ${GUARD_LIMIT:-100} python3 benchmarks/guard_overhead.py --target h200 --repeats 5 --out $OUT/guard_overhead_h200.json > $OUT/guard_overhead.txt 2>&1
echo "guard overhead rc=$? $(( $(date +%s) - T0 )) s"; tail -30 $OUT/guard_overhead.txt
timeout ${ATTN_LIMIT:-200} python3 benchmarks/attention.py --dtype bf16 --deadline-s 150 --out $OUT/attention_bf16 > $OUT/attention_bf16.txt 2>&1
echo "attention rc=$? $(( $(date +%s) - T0 )) s"; tail -30 $OUT/attention_bf16.txt
