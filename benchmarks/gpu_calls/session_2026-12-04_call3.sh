#!/usr/bin/env bash
# GPU call 3 of the session of 2026-12-04 (#19, #14): (1) `kerntailor bench --part all` in bf16 over the 21 level-2
# files of ../shared/kernelbench that convolve (not transposed) and then reduce (names with Min, Max, Sum, Mean,
# LogSumExp, Softmax, Pool, GroupNorm, InstanceNorm; copied unchanged into benchmarks/work/kbl2tail/level2: the
# issue's "convolution + reducing tail" set), after the conv row tail (reductions over the channels fused into the
# conv kernel), the tap order / channels-last staging and the coop knob merged; `--jobs 3 --candidates 2 --budget 20`,
# cut at BENCH_LIMIT s; (2) conv_taps_probe.sh: level1 80 and 55, the old K order vs the tap order (with and without
# the channels-last copies) beside eager and torch.compile; (3) conv_transposed_probe.sh: the packed transposed-conv
# weight (helper convt) on level1 73 and 57 beside the old weight read, eager and torch.compile.
# Run from the repository root with carry ["benchmarks/work/kbl2tail", "benchmarks/work/kb"]; results in $OUT/results.tgz.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; rm -rf $R /tmp/kt-home-l2 /tmp/kb-l2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
KERNTAILOR_HOME=/tmp/kt-home-l2 SUITE=benchmarks/work/kbl2tail PART=all DTYPES=bf16 PRECISION=ieee AGAIN=0 \
  JOBS=${JOBS:-3} CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-250} \
  WORK=/tmp/kb-l2 bash benchmarks/bench_suite.sh $R/bench_bf16 > $R/suite_bf16.log 2>&1
cp /tmp/kb-l2/bf16/bench.rows.jsonl $R/rows_bf16.jsonl 2>/dev/null; cp /tmp/kb-l2/log_bf16.txt $R/ 2>/dev/null
rm -f $R/bench_bf16/kernels.tgz; (cd /tmp/kb-l2 && tar czf $R/kernels_bf16.tgz --exclude='*.sqlite' --exclude='*.pyc' . 2>/dev/null)
pack bench $?
python3 - <<'PY' | tee /tmp/results/summary.txt
import json
for line in open('/tmp/results/rows_bf16.jsonl'):
    r = json.loads(line)
    t, fl, c, e = (r.get(k) for k in ('time_us', 'floor_us', 'compile_us', 'eager_us'))
    vs = f"{e / t:.2f}x_eager {c / t:.2f}x_compile" if t and c and e else ''
    print(r.get('problem'), r.get('status'), r.get('mode'), 'lib' if r.get('library_emitted') else 'gen', t, e, c, fl, vs,
          r.get('seconds'), (r.get('message') or r.get('reason') or '')[:200])
PY
pack summary 0
bash benchmarks/gpu_calls/conv_taps_probe.sh $R/taps/conv_taps.json > $R/taps_summary.txt 2>&1
pack taps $?
bash benchmarks/gpu_calls/conv_transposed_probe.sh $R/convt/conv_transposed.json > $R/convt_summary.txt 2>&1
pack convt $?
cat $R/taps_summary.txt $R/convt_summary.txt; cat $R/env.txt
