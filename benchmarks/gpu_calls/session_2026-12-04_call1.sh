#!/usr/bin/env bash
# GPU call 1 of the session of 2026-12-04: (1) #21: Llama-3.2-1B decode `kerntailor optimize --top 8 --graph` (hf_llama.sh,
# SHAPES=decode, one candidate a group, a fresh store home) after optdiff's fix (end_to_end drains the GPU before each
# timed call; graph mode is undone only if a second measurement agrees): the run before the fix measured 7984 us vs
# eager 6178 and undid graph mode, while graph_swaps.py measured the same graph at 1361 us in a CUDA graph;
# (2) #19: the transposed-convolution probe (conv_transposed_probe.sh: KernelBench level1 73, 75, 57, bf16 and fp32,
# generated gather / phase forms vs cuDNN and torch.compile), never measured before.
# Run from the repository root with carry [".hf-bundle", "benchmarks/work/kb"]; everything back in $OUT/results.tgz.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; rm -rf $R /tmp/kt-hf /tmp/hf_llama; mkdir -p $R/hf
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
OUT=$R/hf SHAPES=decode LEAN=0 TOP_DECODE=${TOP_DECODE:-8} BUDGET=${OPT_BUDGET:-20} CANDIDATES=${CANDIDATES:-1} \
  OPT_LIMIT=${OPT_LIMIT:-300} KT_COMMIT=${KT_COMMIT:-unknown} bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf $?
LIMIT=${CONVT_LIMIT:-175} bash benchmarks/gpu_calls/conv_transposed_probe.sh $R/convt/conv_transposed.json > $R/convt_summary.txt 2>&1
pack convt $?
tail -c 3000 $R/hf_llama.txt; cat $R/convt_summary.txt; cat $R/env.txt
