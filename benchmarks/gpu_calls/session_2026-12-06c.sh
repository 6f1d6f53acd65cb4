#!/usr/bin/env bash
# Third session of 2026-12-06, call 2: (1) level-2 77 alone (`generate`, measured, fp32), where the sample bench of
# call 1 (9e84359) left its judge at `variant odd+width=1048579, draw edge:rows, step run 1` for 208 s until the cut,
# past the edge allowance (~120 s): every Python process gets a faulthandler (a sitecustomize on PYTHONPATH) and, if
# the run is still going at HANG_S, a SIGUSR1 that writes each process's stacks to $OUT/stacks/; (2) the same 11-file
# level-2 sample as call 1 (edge cases now hold the GPU's lock shared; a module that lost only to a failing
# torch.compile ships), cut at BENCH_LIMIT.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-06c.sh; carry ["benchmarks/work/kbh"] (prepared
# as in session_2026-12-06_next.sh's header). ALONE (default 77) names the files of stage 1, one after the other;
# BENCH_LIMIT=0 skips stage 2. Run so at 951f557 (call 2), then with ALONE="62_... 92_..." BENCH_LIMIT=0 (call 3),
# then ALONE=" " BENCH_LIMIT=400 (call 4, e665519). SAMPLE names stage 2's folder (default benchmarks/work/kbh). The
# next session ran SAMPLE=benchmarks/work/normpool (level-2 3, 23, 72, 77, 85, 92 copied from ../shared/kernelbench/
# level2; carry it) with BENCH_LIMIT=330 at a0f7ec6, cut with one row (benchmarks/data/h100_2026-12-06d). Next: the
# same at 38d5a0b or later with BENCH_LIMIT ~450 (85, 92 and 23 need their times), then 27, 79, 11, then the sample.
# The fifth session ran it at e2625ad and 3590d45 (normpool, BENCH_LIMIT 430/420) and SAMPLE=benchmarks/work/kbh
# (BENCH_LIMIT=265) on the warm machine: benchmarks/data/h100_2026-12-06e. On a warm machine `rm -rf /tmp/kb-bench
# /tmp/benchout /tmp/kt*` first: the bench resumes its journal there, and the store (~/.kerntailor) serves earlier
# verdicts. Next: 27, 79, 11 (their plans changed in 3c4bd3f), and why 85's GroupNorm tail in the pool moved no time.
# The sixth session ran SAMPLE=benchmarks/work/normpool (BENCH_LIMIT=430) and SAMPLE=benchmarks/work/libtail2 (level-2 6,
# 11, 15, 24, 27, 32, 48, 55, 62 copied unchanged; BENCH_LIMIT=480) at 9169191 on an H200: benchmarks/data/
# h200_2026-12-06f. Next: libtail2 again at 7f4d480 or later (11's stretched GroupNorm rows now run a looped form).
# The seventh session (2026-12-07) meant to run SAMPLE=benchmarks/work/nplt2/a (level-2 3, 11, 15, 27, 72, 77 copied unchanged: the
# sample files whose reductions read a channels-last library output, 76501c6/255f7c6) after twelve failed starts, none of which ran it. Stage 1
# now generates for the GPU it runs on (--target local; it said h100, which an H200 runs in predicted mode).
# The session of 2026-12-07 meant to run SAMPLE=benchmarks/work/mix7 (level-2 3, 72, 77 and level-3 19_MobileNetV1,
# 20_MobileNetV2, 22_EfficientNetB0 copied unchanged: the layout change, and the conv nets whose kernel.py raised before
# 1808eb4) with BENCH_LIMIT=420; every device request failed to start. Then nplt2/b, then benchmarks/work/kb1red (level-1
# 33, 35, 39, 47, 49, 52).
# The second session of 2026-12-07 ran SAMPLE=benchmarks/work/mix7 (BENCH_LIMIT=420) and benchmarks/work/kb1red (320) on an
# H100 (src of e2649da): benchmarks/data/h100_2026-12-07. The three level-3 nets were cut in their searches beside five
# other jobs: next, a folder of those three alone with BENCH_LIMIT ~560; then nplt2/b; 39_L2Norm_ on an H200.
# The third session of 2026-12-07 ran SAMPLE=benchmarks/work/l3nets (level-3 19_MobileNetV1, 20_MobileNetV2, 22_EfficientNetB0
# copied unchanged) at d6cae71 (BENCH_LIMIT=555, cut in search) and 66ae430 (545; all three rows): benchmarks/data/
# h100_2026-12-07c. Next: the same at 14a0f1d or later (the probe fix, layouts timed beside their readers), then nplt2/b,
# 39_L2Norm_ on an H200.
# The fifth session of 2026-12-07 ran SAMPLE=benchmarks/work/l3nets (BENCH_LIMIT=520) at 049280b + the size fit's dim order
# on an H200: benchmarks/data/h200_2026-12-07e (V1, B0 pass the referee; V2's candidate ran out of GPU memory at the edge
# draw beside the other jobs). Keep only the problem files in SAMPLE: a kernels/ folder there is loaded too.
# HANG_S's SIGUSR1 also reaches ptxas (its path holds "python3"): a PTXAS error code -10 after it is the dump's.
export PYTHONUNBUFFERED=1
mkdir -p /tmp/fh
cat > /tmp/fh/sitecustomize.py <<'PY'
import faulthandler, os, signal
try:
    faulthandler.register(signal.SIGUSR1, file=open(f"/tmp/fhdump.{os.getpid()}.txt", "w"), all_threads=True)
except Exception:
    pass
PY
for NAME in ${ALONE:-77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool}; do
T0=$(date +%s); S=${NAME%%_*}
F=benchmarks/work/kbh/level2/$NAME.py
PYTHONPATH=src:/tmp/fh KERNTAILOR_HOME=/tmp/kt$S timeout ${ALONE_LIMIT:-220} python3 -m kerntailor generate $F \
  --target ${TARGET:-local} --precision ieee --candidates 3 --budget 30 --strategy random --out /tmp/o$S -v > $OUT/$S.log 2>&1 &
PID=$!
for i in $(seq 1 ${HANG_S:-170}); do kill -0 $PID 2>/dev/null || break; sleep 1; done
if kill -0 $PID 2>/dev/null; then
  mkdir -p $OUT/stacks$S; ps -eo pid,ppid,etimes,args | grep -i python | grep -v grep > $OUT/stacks$S/ps.txt
  for p in $(pgrep -f python3); do kill -USR1 $p 2>/dev/null; done
  sleep 3; cp /tmp/fhdump.*.txt $OUT/stacks$S/ 2>/dev/null; rm -f /tmp/fhdump.*.txt
  nvidia-smi > $OUT/stacks$S/nvidia-smi.txt 2>&1
fi
wait $PID; echo "$S alone rc=$? $(( $(date +%s) - T0 )) s"
tail -3 $OUT/$S.log
cp /tmp/o$S/report.json $OUT/$S.report.json 2>/dev/null
done
[ "${BENCH_LIMIT:-320}" = 0 ] && exit 0
T1=$(date +%s)
export PYTHONPATH=src
SUITE=${SAMPLE:-benchmarks/work/kbh} PART=all DTYPES=fp32 AGAIN=0 JOBS=6 CANDIDATES=3 BUDGET=30 \
  TIMEOUT=${BENCH_LIMIT:-320} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh /tmp/benchout > $OUT/suite.log 2>&1
echo "sample done $(( $(date +%s) - T1 )) s"
python3 benchmarks/gpu_calls/rows_summary.py /tmp/kb-bench/fp32/bench.rows.jsonl /tmp/kb-bench/fp32/bench.progress.jsonl
cp /tmp/kb-bench/fp32/bench.rows.jsonl $OUT/kb-bench.rows.jsonl; cp /tmp/kb-bench/fp32/bench.progress.jsonl $OUT/
cp /tmp/kb-bench/log_fp32.txt $OUT/kb-bench.log 2>/dev/null; cp /tmp/benchout/env.txt $OUT/env.txt
(cd /tmp/kb-bench && find . -name report.json -o -name report.md | tar czf $OUT/kb-bench.reports.tgz -T -)
