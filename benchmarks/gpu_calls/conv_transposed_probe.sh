#!/usr/bin/env bash
# The generated transposed convolution (codegen/conv.py and conv_phases.py, #19) against cuDNN (eager) on the H200:
# benchmarks/conv_gen_probe.py --quick --unpacked --taps-outer over KernelBench level1 73 (3-d, stride 2, 32 -> 32
# channels; its groups argument lands in output_padding's place: one group) and 57 (2-d, stride 1, 8 x 64 x 1024^2);
# IDS="73 57 75" adds 75 (2-d, stride (2, 3), dilation (2, 1), 4 groups). Forms: gen_ph_* split by output phase
# (73's default), gen_ig_* the gather form (57's default), both with the weight packed by the host (the default
# now); "_uw" the same with the weight read through its own view (the form before: the default schedule and the
# fp32 tf32 seed); "_to" at stride 1 (57) the gather form with its taps outer (taps_outer). The summary gives the
# best of each: ph ig uw to (tp tc: the forward row's tap orders). bf16 first, with torch.compile (limit 72 s, no
# file starts after 45 s); then fp32 without it (ieee and tf32 generated; cuDNN runs tf32 under PyTorch's default
# allow_tf32; limit 45 s); then, bf16, the forward convolution of 57's work
# (benchmarks/data/conv_probe/conv2d_as_transposed_57.py: padding 2; limit 28 s) to tell the transposed form's cost
# from the shape's (FWD=0 leaves it out). < 150 s in all (not measured).
# Each module's output is compared with eager's (rel_err_<label>). One JSON line per problem and dtype on stdout and
# in the log; rows in $1 (bf16), ..._fp32.json and ..._forward.json (times in us, measured). Run from the
# repository root, KernelBench at benchmarks/work/kb (git-ignored: carry it):
#   bash benchmarks/gpu_calls/conv_transposed_probe.sh $OUT/conv_transposed.json
export PYTHONPATH=src PYTHONUNBUFFERED=1
JSON=${1:?usage: conv_transposed_probe.sh OUT.json}
mkdir -p "$(dirname "$JSON")"
LOG="${JSON%.json}.log"
KB=${KB:-benchmarks/work/kb}
FILES=$(for i in ${IDS:-73 57}; do ls $KB/level1/${i}_*.py; done)
PROBE="python3 benchmarks/conv_gen_probe.py --quick --unpacked --taps-outer"
T0=$(date +%s)
timeout ${LIMIT_BF16:-72} $PROBE $FILES --dtype bf16 --with-compile --deadline-s 45 --out "$JSON" > "$LOG" 2>&1
echo "bf16 rc=$? $(( $(date +%s) - T0 )) s"
timeout ${LIMIT_FP32:-45} $PROBE $FILES --dtype fp32 --deadline-s 25 --out "${JSON%.json}_fp32.json" >> "$LOG" 2>&1
echo "fp32 rc=$? $(( $(date +%s) - T0 )) s"
if [ "${FWD:-1}" = 1 ]; then
  timeout ${FWD_LIMIT:-28} python3 benchmarks/conv_gen_probe.py benchmarks/data/conv_probe/conv2d_as_transposed_57.py \
    --dtype bf16 --quick --deadline-s 5 --out "${JSON%.json}_forward.json" >> "$LOG" 2>&1
  echo "forward rc=$? $(( $(date +%s) - T0 )) s"
fi
# the generated sources are re-made from the commit
rm -rf "${JSON%.json}_modules" "${JSON%.json}_fp32_modules" "${JSON%.json}_forward_modules"
python3 - "$LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    t = r.get("times_us", {})
    best = r.get("best_generated")
    forms = " ".join(f"{f} {t[r[f'best_{f}']]:.0f}" for f in ("ph", "ig", "uw", "to", "tp", "tc")
                     if r.get(f"best_{f}") in t)
    errs = {k[8:]: f"{v:.1e}" for k, v in r.items() if k.startswith("rel_err_")}
    print(f"{r['dtype']:5} {r['problem'][:34]:34} eager {t.get('eager', 0):.0f} compile {t.get('torch.compile', 0):.0f} "
          f"| {best} {t.get(best, 0):.0f} ({forms}) | eager/gen {r.get('eager_over_generated')} compile/gen "
          f"{r.get('compile_over_generated')} | rel_err {errs} "
          f"{r.get('error', '') or r.get('skipped', '') or r.get('run_errors', '')} t={r.get('elapsed_s')}")
PY
tail -5 "$LOG" | grep -v '^{'
