#!/usr/bin/env bash
# #19: the implicit GEMM's K orders (codegen/conv.py) on KernelBench level1 80 (5 x 9 kernel, dilation (2, 3),
# padding (2, 4), 32 -> 64 channels, 8 x 512^2) and 55 (3 x 3, no padding, 64 -> 128 channels, 8 x 512 x 1024), bf16,
# beside eager (cuDNN) and torch.compile: benchmarks/conv_gen_probe.py --quick --with-compile. Forms: "ig" the
# weight's (input channel, kernel position) order, the OLD form; "tp" the tap order (kernel position, input channel)
# on NCHW; "tc" the tap order over channels-last copies of x and W (two copy kernels first: the NEW default). Per file:
# the default's tiles in each form, conv_seeds' first two (tc, tp) and its old-form seed. OLD rows: 80's
# gen_ig_128x64x32_w4_s3 (the old default) and gen_ig_128x64x64_w4_s4 (the old seed); 55's gen_ig_128x128x32_w8_s3 and
# gen_ig_128x128x64_w4_s4. Each module's output is compared with eager's (rel_err). One line per variant on stdout
# (us, measured; predicted ~60-70 s a file, not measured; no file starts after 100 s). Run from the repository root,
# KernelBench at benchmarks/work/kb (git-ignored: carry it):
#   bash benchmarks/gpu_calls/conv_taps_probe.sh $OUT/conv_taps.json
export PYTHONPATH=src PYTHONUNBUFFERED=1
JSON=${1:?usage: conv_taps_probe.sh OUT.json}
mkdir -p "$(dirname "$JSON")"
LOG="${JSON%.json}.log"
KB=${KB:-benchmarks/work/kb}
FILES=$(for i in ${IDS:-80 55}; do ls $KB/level1/${i}_*.py; done)
T0=$(date +%s)
timeout ${LIMIT:-145} python3 benchmarks/conv_gen_probe.py $FILES --dtype bf16 --quick --with-compile \
  --deadline-s ${DEADLINE_S:-100} --out "$JSON" > "$LOG" 2>&1
echo "rc=$? $(( $(date +%s) - T0 )) s"
rm -rf "${JSON%.json}_modules"   # the generated sources are re-made from the commit
python3 - "$LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    t = r.get("times_us", {})
    name = r["problem"][:2]
    why = r.get("error", "") or r.get("skipped", "") or r.get("run_errors", "") or r.get("codegen_refused", "")
    print(f"{name} {r['dtype']} sizes {r.get('sizes')} {why}")
    for label in sorted(t, key=t.get):
        err = r.get(f"rel_err_{label}")
        err = f"{err:.1e}" if isinstance(err, float) else "-"
        print(f"{name} {label:34} {t[label]:9.0f} us  rel_err {err}")
PY
tail -5 "$LOG" | grep -v '^{'
