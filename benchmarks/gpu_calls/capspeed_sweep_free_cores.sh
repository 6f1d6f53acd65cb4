#!/usr/bin/env bash
# KernelBench's 221 files through load -> capture -> plan -> generalization on the device machine's free CPU cores
# (no GPU work): the per-file seconds of benchmarks/kernelbench_sweep.py without the 2-core CPU machine's sharing,
# after the meta-forward shortcuts and the capture cache (capspeed, 2026-12-05). KernelBench travels as
# benchmarks/work/kb (a copy of ../shared/kernelbench, git-ignored, carried). One call, under 10 minutes:
#   KT_COMMIT=<commit> bash benchmarks/gpu_calls/capspeed_sweep_free_cores.sh      (carry benchmarks/work/kb)
# Results: $OUT/kernelbench_sweep_free_cores.{json,md}, $OUT/sweep.log, tarred into $OUT/capspeed_sweep.tar.gz.
export PYTHONPATH=src PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc) load $(cut -d' ' -f1-3 /proc/loadavg)"
T0=$(date +%s)
timeout ${LIMIT:-560} python3 benchmarks/kernelbench_sweep.py benchmarks/work/kb/level1 benchmarks/work/kb/level2 \
  benchmarks/work/kb/level3 --out $OUT/kernelbench_sweep_free_cores --jobs ${SWEEP_JOBS:-4} > $OUT/sweep.log 2>&1
echo "sweep rc=$? $(( $(date +%s) - T0 )) s load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $OUT/sweep.log
head -12 $OUT/kernelbench_sweep_free_cores.md 2>/dev/null
tar -czf $OUT/capspeed_sweep.tar.gz -C $OUT kernelbench_sweep_free_cores.json kernelbench_sweep_free_cores.md sweep.log \
  2>/dev/null
