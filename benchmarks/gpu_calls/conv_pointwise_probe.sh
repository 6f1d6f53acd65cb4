#!/usr/bin/env bash
# The pointwise form of the generated convolution (codegen/conv.py, #19: 1x1 convs as a batched GEMM in NCHW's
# layout) beside the implicit GEMM (the old path) and cuDNN on the H200: benchmarks/conv_gen_probe.py --quick over
# KernelBench level1 87 (1x1), 86 (depthwise then 1x1), 63 (3x3), 67 (1-d), 82 (depthwise), bf16 then fp32
# (aim: ~120 s). One JSON line per problem and dtype on stdout and in $OUT/conv_pw.log, all rows in
# $OUT/conv_pw.json (times in us, measured). Run from the repository root, KernelBench at benchmarks/work/kb
# (git-ignored: carry it):
#   OUT=$OUT bash benchmarks/gpu_calls/conv_pointwise_probe.sh
export PYTHONPATH=src PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/conv_pw}; mkdir -p "$OUT"
KB=${KB:-benchmarks/work/kb}
FILES=$(ls $KB/level1/{87,86,63,67,82}_*.py)
T0=$(date +%s)
timeout ${LIMIT:-400} python3 benchmarks/conv_gen_probe.py $FILES --dtype bf16,fp32 --quick \
  --deadline-s ${DEADLINE_S:-240} --out "$OUT/conv_pw.json" > "$OUT/conv_pw.log" 2>&1
echo "rc=$? $(( $(date +%s) - T0 )) s"
rm -rf "$OUT/conv_pw_modules"   # the generated sources are re-made from the commit
python3 - "$OUT/conv_pw.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    t = r.get("times_us", {})
    at = lambda k: f"{k} {t[k]:.0f}" if k in t else "-"
    print(f"{r['dtype']:5} {r['problem'][:34]:34} eager {t.get('eager', 0):.0f} | {at(r.get('best_pw'))} | "
          f"{at(r.get('best_ig'))} | eager/pw {r.get('eager_over_pw')} eager/ig {r.get('eager_over_ig')} "
          f"{r.get('error', '') or r.get('skipped', '') or r.get('run_errors', '')} t={r.get('elapsed_s')}")
PY
tail -5 "$OUT/conv_pw.log" | grep -v '^{'
