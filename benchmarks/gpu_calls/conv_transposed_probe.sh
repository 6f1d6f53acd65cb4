#!/usr/bin/env bash
# The generated transposed convolution (codegen/conv.py and conv_phases.py, #19) against cuDNN (eager) and
# torch.compile on the H200, the weight packed by the host (the default since the packed weight) beside the weight read
# through its own view (the form before: labels ending "_uw", the default schedule and the fp32 tf32 seed), and at
# stride 1 (57) the gather form with its taps outer (taps_outer, labels ending "_to"; the best per form in the summary:
# ph ig uw to): benchmarks/conv_gen_probe.py --quick --with-compile --unpacked --taps-outer over KernelBench level1
# 73 (3-d, stride 2, 32 -> 32 channels; its groups argument lands in output_padding's place: one group) and 57 (2-d,
# stride 1, 8 x 64 x 1024^2), bf16 then fp32 (fp32 rows: ieee and tf32 generated; cuDNN runs tf32 under PyTorch's
# default allow_tf32); IDS="73 57 75" adds 75 (2-d, stride (2, 3), dilation (2, 1), 4 groups). Both generated forms: gen_ph_* split by output phase (73's default), gen_ig_* the gather form (57's default). Then, bf16
# only, the forward convolution of 57's work (benchmarks/data/conv_probe/conv2d_as_transposed_57.py: padding 2) to
# tell the transposed form's cost from the shape's (FWD=0 leaves it out). Each module's output is compared with
# eager's (rel_err_<label>). Aim: < 150 s (no file of the first run starts after 80 s, which stops at 112 s; the
# forward row gets 33 s; not measured). One JSON line per problem and dtype on stdout and in the log, all rows in
# the JSON given as $1 (the forward row in ..._forward.json; times in us, measured). Run from the repository root,
# KernelBench at benchmarks/work/kb (git-ignored: carry it):
#   bash benchmarks/gpu_calls/conv_transposed_probe.sh $OUT/conv_transposed.json
export PYTHONPATH=src PYTHONUNBUFFERED=1
JSON=${1:?usage: conv_transposed_probe.sh OUT.json}
mkdir -p "$(dirname "$JSON")"
LOG="${JSON%.json}.log"
KB=${KB:-benchmarks/work/kb}
FILES=$(for i in ${IDS:-73 57}; do ls $KB/level1/${i}_*.py; done)
T0=$(date +%s)
timeout ${LIMIT:-112} python3 benchmarks/conv_gen_probe.py $FILES --dtype bf16,fp32 --quick --with-compile --unpacked \
  --taps-outer \
  --deadline-s ${DEADLINE_S:-80} --out "$JSON" > "$LOG" 2>&1
echo "rc=$? $(( $(date +%s) - T0 )) s"
if [ "${FWD:-1}" = 1 ]; then
  timeout ${FWD_LIMIT:-33} python3 benchmarks/conv_gen_probe.py benchmarks/data/conv_probe/conv2d_as_transposed_57.py \
    --dtype bf16 --quick --deadline-s 5 --out "${JSON%.json}_forward.json" >> "$LOG" 2>&1
  echo "forward rc=$? $(( $(date +%s) - T0 )) s"
fi
rm -rf "${JSON%.json}_modules" "${JSON%.json}_forward_modules"   # the generated sources are re-made from the commit
python3 - "$LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    t = r.get("times_us", {})
    best = r.get("best_generated")
    forms = " ".join(f"{f} {t[r[f'best_{f}']]:.0f}" for f in ("ph", "ig", "uw", "to") if r.get(f"best_{f}") in t)
    errs = {k[8:]: f"{v:.1e}" for k, v in r.items() if k.startswith("rel_err_")}
    print(f"{r['dtype']:5} {r['problem'][:34]:34} eager {t.get('eager', 0):.0f} compile {t.get('torch.compile', 0):.0f} "
          f"| {best} {t.get(best, 0):.0f} ({forms}) | eager/gen {r.get('eager_over_generated')} compile/gen "
          f"{r.get('compile_over_generated')} | rel_err {errs} "
          f"{r.get('error', '') or r.get('skipped', '') or r.get('run_errors', '')} t={r.get('elapsed_s')}")
PY
tail -5 "$LOG" | grep -v '^{'
