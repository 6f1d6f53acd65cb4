#!/usr/bin/env bash
# GPU call 5 (2026-12-02): generate on the H200 for the attention problems after the head-dim refusal (63168f1):
# in call 4 the edges stage failed the generated SDPA (Triton's CompilationError at a head dim of 2^20 + 3).
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
T0=$(date +%s)
for spec in "problems/level1/sdpa.py::--dtype bf16" "problems/level3/gqa_causal_attention.py::--dtype bf16"; do
  f=${spec%%::*}; extra=${spec##*::}; name=$(basename $f .py)
  timeout 110 python3 -m kerntailor generate $f --target h200 $extra --candidates 3 --budget 30 --no-store \
    --out /tmp/gen_$name --json > /tmp/gen_$name.json 2> $OUT/gen_$name.log
  echo "generate $name rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/gen_$name.log
  cp /tmp/gen_$name/report.md $OUT/report_$name.md 2>/dev/null
  python3 - "/tmp/gen_$name/report.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except OSError as e:
    print("no report", e); raise SystemExit
v = r.get("verdict") or {}
print("status", r.get("status"), "| verdict", v.get("passed"), (v.get("reason") or "")[:400])
print("edges skipped:", str(v.get("edges_skipped"))[:200])
PY
done
