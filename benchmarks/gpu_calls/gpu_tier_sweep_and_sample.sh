#!/usr/bin/env bash
# GPU call 1 of 2026-12-02 (fifth session): (a) KernelBench's 221 files through load -> capture -> plan ->
# generalization on the device machine's CPUs (benchmarks/kernelbench_sweep.py, 30 s per file), in the background;
# (b) the whole GPU test tier (`pytest -m gpu`, 3 xdist workers); (c) a new rule-made sample of levels 1+2
# (every 8th file from offset 4: benchmarks/kernelbench_sample.py --every 8 --offset 4, carried as
# benchmarks/work/kb8o4) through `kerntailor bench` in fp32, cut at BENCH_LIMIT seconds.
# KernelBench itself travels as benchmarks/work/kb (a copy of ../shared/kernelbench, git-ignored, carried).
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"
T0=$(date +%s)
( python3 benchmarks/kernelbench_sweep.py benchmarks/work/kb/level1 benchmarks/work/kb/level2 benchmarks/work/kb/level3 \
    --out $OUT/kernelbench_sweep_h200machine --jobs ${SWEEP_JOBS:-6} > $OUT/sweep.log 2>&1; echo "sweep rc=$? $(( $(date +%s) - T0 )) s" >> $OUT/sweep.log ) &
timeout ${TEST_LIMIT:-240} python3 -m pytest -q -p no:cacheprovider -m gpu -n 3 --dist loadfile -rfE --tb=short \
  --durations=20 tests/ > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s) - T0 )) s"; grep -E "^(FAILED|ERROR)|passed|failed" $OUT/gpu_tests.txt | cut -c1-300 | tail -25
SUITE=${SUITE:-benchmarks/work/kb8o4} PART=all DTYPES=fp32 AGAIN=0 JOBS=${JOBS:-6} CANDIDATES=${CANDIDATES:-4} \
  BUDGET=${BUDGET:-30} TIMEOUT=${BENCH_LIMIT:-240} WORK=/tmp/kb-bench bash benchmarks/bench_suite.sh $OUT/bench > $OUT/suite.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s"
cp /tmp/kb-bench/*/bench.rows.jsonl $OUT/ 2>/dev/null; cp /tmp/kb-bench/log_fp32.txt $OUT/ 2>/dev/null
python3 - <<'PY'
import json, glob
for f in glob.glob('/tmp/kb-bench/*/bench.rows.jsonl'):
    for line in open(f):
        r = json.loads(line)
        print({k: r.get(k) for k in ('problem', 'status', 'decision', 'time_us', 'eager_us', 'compile_us', 'floor_us')},
              (r.get('message') or r.get('reason') or '')[:160])
PY
wait; tail -3 $OUT/sweep.log; head -12 $OUT/kernelbench_sweep_h200machine.md 2>/dev/null
