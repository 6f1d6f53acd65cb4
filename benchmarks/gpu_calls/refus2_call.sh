#!/usr/bin/env bash
# Branch refus2 (issue #14) on one GPU, in one call: the GPU form of the row helpers against torch (_row_prod_hw's
# multiply tl.reduce beside _row_max_hw/_row_min_hw, NaN/inf/0 rows), then `kerntailor generate` timed against
# eager and torch.compile on the problems whose kernels the branch changed: torch.prod over a strided axis, the
# roll + LayerNorm of Swin's tokens (one kernel), the Mamba2-shaped scan whose epilogue reads the row end (a first
# pass), and KernelBench's Mamba2 49 and SwinV2 where shared/kernelbench was carried.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/refus2_call.sh   (results: $OUT/results.tgz, $OUT/summary.txt)
export PYTHONPATH=src PYTHONUNBUFFERED=1
mkdir -p /tmp/genset
python3 -m pytest -q -p no:cacheprovider tests/test_codegen_helpers.py -k on_the_gpu > /tmp/refus2_gpu_tests.txt 2>&1
echo "gpu helper tests rc=$?" >> /tmp/refus2_gpu_tests.txt
KB=shared/kernelbench
RUNS=(prod_dim1=problems/level1/prod_over_a_dimension.py
      prod_dim1_bf16="problems/level1/prod_over_a_dimension.py:--dtype bf16"
      roll_norm=tests/data/refusals/roll_then_layernorm.py
      scan_row_end=tests/data/refusals/scan_row_end.py)
[ -f $KB/level3/49_Mamba2ReturnFinalState.py ] && RUNS+=(mamba2_49=$KB/level3/49_Mamba2ReturnFinalState.py)
[ -f $KB/level3/30_SwinTransformerV2.py ] && RUNS+=(swinv2=$KB/level3/30_SwinTransformerV2.py)
GEN_LIMIT=${GEN_LIMIT:-420} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-40} \
  OUT=${OUT:-/tmp/out} bash benchmarks/gpu_calls/generate_set.sh "${RUNS[@]}"
cp /tmp/refus2_gpu_tests.txt /tmp/genset/ && cat /tmp/refus2_gpu_tests.txt
tar czf $OUT/results.tgz -C /tmp genset
