#!/usr/bin/env bash
# GPU call 2 of the fifth session of 2026-12-05: the referee's and the wrapper's fixes on the problems that found them.
#  1. benchmarks/host_overhead.py on the decode step at batch 1 (bf16): host vs GPU time per call of eager and of
#     three generated schedules whose forward() calls _launch_kernels itself in eager (carried:
#     benchmarks/work/host/*.py, generated on the CPU from this commit by attn_probe.planned + generate_module).
#  2. `kerntailor generate` (generate_set.sh, --target the GPU present) on decode b1 (its edge case num_heads=1048592
#     broke the judge's CUDA context in PyTorch's own SDPA: now judged again without it) and scan_row_end (fp32's
#     NaN where float64 gives Inf at the 10^6-long rows case: now either passes).
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05e_call2.sh   (carry ["benchmarks/work/host"])
export PYTHONPATH=src PYTHONUNBUFFERED=1
python3 benchmarks/host_overhead.py benchmarks/data/attn_probe/sdpa_gqa_decode_b1.py --dtype bf16 \
  benchmarks/work/host/split64.py benchmarks/work/host/split16.py benchmarks/work/host/unsplit128.py \
  --out $OUT/host_overhead_decode_b1.json > $OUT/host_overhead.log 2>&1
grep -v '^ ' $OUT/host_overhead.log | head -20
GEN_LIMIT=${GEN_LIMIT:-360} CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-30} bash benchmarks/gpu_calls/generate_set.sh \
  "decode_b1=benchmarks/data/attn_probe/sdpa_gqa_decode_b1.py:--dtype bf16" \
  scan_row_end=tests/data/refusals/scan_row_end.py
