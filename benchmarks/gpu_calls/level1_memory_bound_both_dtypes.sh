#!/usr/bin/env bash
# GPU call of 2026-12-03: KernelBench level 1's memory-bound files (benchmarks/work/kb1mb/level1: the 33 files of
# ../shared/kernelbench/level1 that `bench --part memory-bound` keeps, less the convolutions it wrongly kept, see
# BENCHMARKS.md), through `kerntailor bench` in fp32 and bf16 at once (two processes on the one GPU; the timing
# lock measure/gpulock.py serializes every timed section across processes), each cut at BENCH_LIMIT seconds.
# SUITE_fp32 / SUITE_bf16: a different folder per dtype (default SUITE, else benchmarks/work/kb1mb).
export PYTHONPATH=src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"
T0=$(date +%s)
for d in ${DTYPES:-fp32 bf16}; do SUITE_D=$(eval echo \${SUITE_$d:-${SUITE:-benchmarks/work/kb1mb}})
  KERNTAILOR_HOME=/tmp/kt-home-$d SUITE=$SUITE_D PART=memory-bound DTYPES=$d AGAIN=0 \
    JOBS=${JOBS:-4} CANDIDATES=${CANDIDATES:-4} BUDGET=${BUDGET:-30} TIMEOUT=${BENCH_LIMIT:-500} \
    WORK=/tmp/kb-$d bash benchmarks/bench_suite.sh $OUT/bench_$d > $OUT/suite_$d.log 2>&1 &
done
wait
echo "bench done $(( $(date +%s) - T0 )) s"
for d in ${DTYPES:-fp32 bf16}; do SUITE_D=$(eval echo \${SUITE_$d:-${SUITE:-benchmarks/work/kb1mb}})
  cp /tmp/kb-$d/$d/bench.rows.jsonl $OUT/rows_$d.jsonl 2>/dev/null; cp /tmp/kb-$d/log_$d.txt $OUT/ 2>/dev/null
  (cd /tmp/kb-$d && tar czf $OUT/kernels_$d.tgz --exclude='*.sqlite' . 2>/dev/null)
done
python3 - <<'PY'
import json, glob, os
for f in sorted(glob.glob(os.environ['OUT'] + '/rows_*.jsonl')):
    print('==', f)
    for line in open(f):
        r = json.loads(line)
        t, fl, c, e = (r.get(k) for k in ('time_us', 'floor_us', 'compile_us', 'eager_us'))
        ratio = f"{t / fl:.2f}xfloor" if t and fl else ''
        vs = f"{min(c or 1e30, e or 1e30) / t:.2f}x_best" if t and (c or e) else ''
        print(r.get('problem'), r.get('status'), t, e, c, fl, ratio, vs, r.get('seconds'),
              (r.get('message') or r.get('reason') or '')[:140])
        print('   wait', r.get('admission_wait_s'), 'stages', r.get('stage_s'), 'judge', r.get('judge_phase_s'))
PY
