#!/usr/bin/env bash
# GPU call 2 of the sixth session of 2026-12-05: `kerntailor generate` (generate_set.sh: --target the GPU present,
# measured) on the Llama decode step as SDPA (GQA 32 / 8 heads, Lk 4096, D 128) at batch 32 (bf16 and fp32) and
# batch 1 (bf16), after GQA packing became a knob (PACK) and the default where it is offered: which schedule the
# search keeps, the referee's verdict on the GPU, and the time beside eager and torch.compile. Batch 1 is host-bound
# (tens of us of Python a call) and runs beside the others here: its times are not its own.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05f_call2.sh
GEN_LIMIT=${GEN_LIMIT:-330} CANDIDATES=${CANDIDATES:-4} BUDGET=${BUDGET:-30} bash benchmarks/gpu_calls/generate_set.sh \
  "decode_b32=benchmarks/data/attn_probe/sdpa_gqa_decode_b32.py:--dtype bf16" \
  decode_b32_fp32=benchmarks/data/attn_probe/sdpa_gqa_decode_b32.py \
  "decode_b1=benchmarks/data/attn_probe/sdpa_gqa_decode_b1.py:--dtype bf16"
for d in decode_b32 decode_b32_fp32 decode_b1; do
  echo "== $d"; grep -E "^ *(k0|schedule|candidate|trial|best|kept|PACK)" /tmp/genset/$d.log | head -20
  python3 - /tmp/genset/$d/report.json <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no report", e); sys.exit()
for g in r.get("groups", []):
    print(g.get("name"), g.get("schedule"), g.get("status"), (g.get("reason") or "")[:150])
PY
done
