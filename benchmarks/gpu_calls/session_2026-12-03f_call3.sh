#!/usr/bin/env bash
# GPU call 3 of 2026-12-03 (fifth session), after the merges of graphlean, attnbf16 and catderive: (1) `kerntailor
# bench` on fp32 93_masked_cumsum (the scan prologue) and bf16 100_HingeLoss (no Kahan for 16-bit sums), suites
# copied unchanged (call 2's rows ran out of memory beside a generate outside the ledger); (2) benchmarks/attn_probe.py
# (#20: bf16 generated attention against eager SDPA and torch.compile, six shapes); (3) Llama-3.2-1B decode
# (hf_llama.sh, SHAPES=decode LEAN=1): graph_lean.py (eager vs graph mode's graph before/after lean.py, no swap) and
# `kerntailor optimize` with graph mode (the KV-cache concatenations now generate: catderive).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/l1 $R/hf
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
OUT=$R/l1 KT_COMMIT=${KT_COMMIT:-unknown} SUITE_fp32=benchmarks/work/kb1h_fp32 SUITE_bf16=benchmarks/work/kb1h_bf16 \
  JOBS=1 CANDIDATES=3 BUDGET=20 BENCH_LIMIT=${BENCH_LIMIT:-120} \
  bash benchmarks/gpu_calls/level1_memory_bound_both_dtypes.sh > $R/l1/summary.txt 2>&1 < /dev/null
pack l1 $?
timeout ${ATTN_LIMIT:-130} python3 benchmarks/attn_probe.py --max-wall ${ATTN_WALL:-100} --out $R/attn_probe.json > $R/attn_probe.log 2>&1
pack attn $?
OUT=$R/hf SHAPES=decode LEAN=1 LEAN_LIMIT=${LEAN_LIMIT:-50} TOP_DECODE=${TOP_DECODE:-9} BUDGET=${OPT_BUDGET:-60} \
  OPT_LIMIT=${OPT_LIMIT:-220} KT_COMMIT=${KT_COMMIT:-unknown} bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf_llama $?
cat $R/env.txt; grep -v "^   wait" $R/l1/summary.txt | tail -5 | cut -c1-260; tail -c 1800 $R/attn_probe.log; tail -c 2500 $R/hf_llama.txt
