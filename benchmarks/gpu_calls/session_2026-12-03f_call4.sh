#!/usr/bin/env bash
# GPU call 4 of 2026-12-03 (fifth session): Llama-3.2-1B decode optimize again (hf_llama.sh, SHAPES=decode), after
# optimize swaps a kept generated module that lost only to torch.compile of its group and beat eager (call 3: the
# KV-cache concatenation groups generated and passed the referee at 67.5-69.7 us against compile's 67.3-68.2 and
# eager's 478.5-478.9, so generate kept the library path and optimize skipped them). Seven groups, one candidate each
# (the device budget left: ~500 s).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/hf
OUT=$R/hf SHAPES=decode LEAN=0 TOP_DECODE=${TOP_DECODE:-7} BUDGET=${OPT_BUDGET:-20} CANDIDATES=${CANDIDATES:-1} \
  OPT_LIMIT=${OPT_LIMIT:-390} KT_COMMIT=${KT_COMMIT:-unknown} bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
tar czf $OUT/results.tgz -C /tmp results
tail -c 3500 $R/hf_llama.txt
