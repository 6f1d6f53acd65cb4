#!/usr/bin/env bash
# GPU call 4 of the sixth session of 2026-12-03: (1) #21: Llama-3.2-1B decode `kerntailor optimize` (hf_llama.sh,
# SHAPES=decode, graph mode, eight groups, one candidate each) after graph mode's kernel nodes carry the values of the
# nodes they replace (swapdiag: lean.py's GQA rewrite then still applies; graph_swaps.py measured 4605 us swapped vs
# eager 4855 in call 2); (2) #19: the transposed-convolution probe (benchmarks/gpu_calls/conv_transpose_probe.sh, when
# present).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; rm -rf $R; mkdir -p $R/hf
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
OUT=$R/hf SHAPES=decode LEAN=0 TOP_DECODE=${TOP_DECODE:-8} BUDGET=${OPT_BUDGET:-20} CANDIDATES=${CANDIDATES:-1} \
  OPT_LIMIT=${OPT_LIMIT:-330} KT_COMMIT=${KT_COMMIT:-unknown} bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf $?
if [ -f benchmarks/gpu_calls/conv_transpose_probe.sh ]; then
  OUT=$R/convt LIMIT=${CONVT_LIMIT:-150} bash benchmarks/gpu_calls/conv_transpose_probe.sh > $R/convt_summary.txt 2>&1
  pack convt $?
fi
tail -c 2500 $R/hf_llama.txt; tail -20 $R/convt_summary.txt 2>/dev/null; cat $R/env.txt
