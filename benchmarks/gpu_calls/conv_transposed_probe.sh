#!/usr/bin/env bash
# The generated transposed convolution (codegen/conv.py and conv_phases.py, #19) against cuDNN (eager) and torch.compile on
# the H200: benchmarks/conv_gen_probe.py --quick --with-compile over KernelBench level1 73 (3-d, stride 2, 32 -> 32
# channels; its groups argument lands in output_padding's place: one group), 75 (2-d, stride (2, 3), dilation (2, 1),
# 4 groups), 57 (2-d, stride 1, 8 x 64 x 1024^2), bf16 then fp32 (fp32 rows: ieee and tf32 generated; cuDNN runs
# tf32 under PyTorch's default allow_tf32); IDS="73 75 57 79" adds 79 (1-d, stride 2, dilation 2) if time allows.
# Both generated forms, 4-5 modules per row: gen_ph_* split by output phase (the default at stride > 1), gen_ig_* the
# gather form (57's default). Each module's output is compared with eager's (rel_err_<label>). Aim: < 180 s (no
# file starts after 150 s; predicted ~20-40 s per row, not measured). One JSON line per
# problem and dtype on stdout and in the log, all rows in the JSON given as $1 (times in us, measured). Run from the
# repository root, KernelBench at benchmarks/work/kb (git-ignored: carry it):
#   bash benchmarks/gpu_calls/conv_transposed_probe.sh $OUT/conv_transposed.json
export PYTHONPATH=src PYTHONUNBUFFERED=1
JSON=${1:?usage: conv_transposed_probe.sh OUT.json}
mkdir -p "$(dirname "$JSON")"
LOG="${JSON%.json}.log"
KB=${KB:-benchmarks/work/kb}
FILES=$(for i in ${IDS:-73 75 57}; do ls $KB/level1/${i}_*.py; done)
T0=$(date +%s)
timeout ${LIMIT:-175} python3 benchmarks/conv_gen_probe.py $FILES --dtype bf16,fp32 --quick --with-compile \
  --deadline-s ${DEADLINE_S:-150} --out "$JSON" > "$LOG" 2>&1
echo "rc=$? $(( $(date +%s) - T0 )) s"
rm -rf "${JSON%.json}_modules"   # the generated sources are re-made from the commit
python3 - "$LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    t = r.get("times_us", {})
    best = r.get("best_generated")
    forms = " ".join(f"{f} {t[r[f'best_{f}']]:.0f}" for f in ("ph", "ig") if r.get(f"best_{f}") in t)
    errs = {k[8:]: f"{v:.1e}" for k, v in r.items() if k.startswith("rel_err_")}
    print(f"{r['dtype']:5} {r['problem'][:34]:34} eager {t.get('eager', 0):.0f} compile {t.get('torch.compile', 0):.0f} "
          f"| {best} {t.get(best, 0):.0f} ({forms}) | eager/gen {r.get('eager_over_generated')} compile/gen "
          f"{r.get('compile_over_generated')} | rel_err {errs} "
          f"{r.get('error', '') or r.get('skipped', '') or r.get('run_errors', '')} t={r.get('elapsed_s')}")
PY
tail -5 "$LOG" | grep -v '^{'
