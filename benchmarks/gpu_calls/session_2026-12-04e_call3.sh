#!/usr/bin/env bash
# GPU call 3 of the fifth session of 2026-12-04, one H200, two jobs at once (timed sections serialize on the
# stopwatch's lock):
#  (#18 item 2) benchmarks/strided_probe.py: strided-axis max / argmin / sum, old vs new default and neighbours, beside
#               eager, torch.compile and the floor (merge of `strided`);
#  (#14) `generate -vv` on level-3 4_LeNet5 fp32 with the timestamped log and the GPU worker's batch split (c9c71bb):
#        where a small model's minutes go (call 2: 140 s were not enough for its 7 groups).
# Prepare, carry ["benchmarks/work/l3small"] (4_LeNet5.py in it, see call 2).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/call3; rm -rf $R; mkdir -p $R; T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
( timeout ${PROBE_LIMIT:-280} python3 benchmarks/strided_probe.py $R/strided > $R/strided.log 2>&1
  echo "strided rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt ) &
( KERNTAILOR_HOME=/tmp/kt-home-lenet timeout ${GEN_LIMIT:-200} python3 -m kerntailor generate \
    benchmarks/work/l3small/level3/4_LeNet5.py --target h200 --precision ieee --candidates 2 --budget 20 \
    --out $R/lenet -vv > $R/lenet.log 2>&1
  echo "lenet rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt ) &
wait
cat $R/env.txt; cat $R/strided/strided_probe.md 2>/dev/null | head -60; grep "GPU worker batch" $R/lenet.log | cut -c1-250
grep -v "kerntailor\." $R/lenet.log | tail -15
tar czf $OUT/results.tgz -C /tmp call3
