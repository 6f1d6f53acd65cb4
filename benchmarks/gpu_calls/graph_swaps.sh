#!/usr/bin/env bash
# GPU call (issue #21): Llama-3.2-1B decode (bf16, batch 32, cache 4096, 4 layers) with its KV-cache concatenations
# swapped in graph mode, before and after the kernel calls' nodes carry values (graph.py _carry_meta), against eager,
# the lean graph, a CUDA graph and torch.compile: benchmarks/graph_swaps.py (its docstring says what each variant is).
# Carry [".hf-bundle"] (transformers for the box: see the header of hf_llama.sh). GPU time: about 3-4 minutes
# (compiled variants started past MAX_WALL, 210 s, are left out; the whole call is cut at LIMIT, 300 s).
# Writes $OUT/graph_swaps_decode.json (the numbers), $OUT/graph_swaps_decode.log and $OUT/env.txt; prints the table.
set -u
OUT=${OUT:-/tmp/graph_swaps}; mkdir -p "$OUT"
python3 -c "import sys; t = 'cp%d%d' % sys.version_info[:2]; b = open('.hf-bundle/python').read().strip(); \
assert t == b, f'the bundle is for {b}, this python3 is {t}'" || { echo "no .hf-bundle for this python3 (hf_llama.sh header)"; exit 1; }
mkdir -p /tmp/hf-site && tar -xJf .hf-bundle/site.tar.xz -C /tmp/hf-site || { echo "no .hf-bundle/site.tar.xz"; exit 1; }
export PYTHONPATH=/tmp/hf-site:src PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, transformers, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'triton', triton.__version__, 'transformers', transformers.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} $(date -u +%FT%TZ)"; } > "$OUT/env.txt" 2>&1
timeout ${LIMIT:-300} python3 benchmarks/graph_swaps.py problems/models/llama3_2_1b_decode.py --dtype bf16 \
  --max-wall ${MAX_WALL:-210} --out "$OUT/graph_swaps_decode.json" ${SWAP_ARGS:-} > "$OUT/graph_swaps_decode.log" 2>&1
echo "graph_swaps rc=$?" >> "$OUT/env.txt"
cat "$OUT/env.txt"
grep -v "Warning\|warn" "$OUT/graph_swaps_decode.log" | tail -25
