#!/usr/bin/env bash
# GPU call 3 of the sixth session of 2026-12-03: (1) benchmarks/coop_probe.py (#18: the cooperative softmax that
# reuses phase A's exponentials, beside the old recompute text, register-capped lines, P4 and P1; fp32 and bf16);
# then (2) #19: seven forward convolutions of KernelBench level 1 copied unchanged into benchmarks/work/kbconv2/level1
# (63: the chunked K loop for the long-reduction edge; 80: variants/edges that keep the dilated kernel inside its
# input; 67, 76, 82, 86, 87: call 1 lost them to a damaged store, now fresh homes), through `kerntailor bench
# --part all` in bf16 (ieee) and fp32 (--precision tf32), both at once, each cut at BENCH_LIMIT seconds.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
rm -rf /tmp/kt-home-fp32 /tmp/kt-home-bf16 /tmp/kb-fp32 /tmp/kb-bf16; df -h /tmp | tail -1 >> $R/env.txt
timeout ${COOP_LIMIT:-130} python3 benchmarks/coop_probe.py --out $R/coop.json > $R/coop.log 2>&1
pack coop $?
for spec in "fp32 tf32" "bf16 ieee"; do set -- $spec
  KERNTAILOR_HOME=/tmp/kt-home-$1 SUITE=benchmarks/work/kbconv2 PART=all DTYPES=$1 PRECISION=$2 AGAIN=0 \
    JOBS=${JOBS:-2} CANDIDATES=${CANDIDATES:-3} BUDGET=${BUDGET:-30} TIMEOUT=${BENCH_LIMIT:-480} \
    WORK=/tmp/kb-$1 bash benchmarks/bench_suite.sh $R/bench_$1 > $R/suite_$1.log 2>&1 &
done
wait
for d in fp32 bf16; do cp /tmp/kb-$d/$d/bench.rows.jsonl $R/rows_$d.jsonl 2>/dev/null; cp /tmp/kb-$d/log_$d.txt $R/ 2>/dev/null
  rm -f $R/bench_$d/kernels.tgz; (cd /tmp/kb-$d && tar czf $R/kernels_$d.tgz --exclude='*.sqlite' --exclude='*.pyc' . 2>/dev/null); done
pack conv $?
python3 - <<'PY' | tee /tmp/results/summary.txt
import json, glob
for f in sorted(glob.glob('/tmp/results/rows_*.jsonl')):
    print('==', f)
    for line in open(f):
        r = json.loads(line)
        t, fl, c, e = (r.get(k) for k in ('time_us', 'floor_us', 'compile_us', 'eager_us'))
        ratio = f"{t / fl:.2f}xfloor" if t and fl else ''
        vs = f"{e / t:.2f}x_eager {c / t:.2f}x_compile" if t and c and e else ''
        print(r.get('problem'), r.get('status'), r.get('mode'), 'lib' if r.get('library_emitted') else 'gen', t, e, c, fl, ratio, vs, r.get('seconds'),
              (r.get('message') or r.get('reason') or '')[:160])
PY
pack summary 0
cat $R/env.txt; tail -24 $R/coop.log | cut -c1-200
