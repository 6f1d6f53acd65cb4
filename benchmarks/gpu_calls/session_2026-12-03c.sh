#!/usr/bin/env bash
# GPU call 3 of 2026-12-03 (second session): Ray (#22 item 4; call 2's comparison lost its files to the device's
# file-count limit) and `kerntailor optimize` with the top 8 groups (#21: call 2's top 3 were all GEMMs that kept the
# library path). Everything goes back as one archive (results.tgz).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
(OUT=$R/ray ONLY="${RAY_ONLY:---only relu}" ARGS="--target h200 --candidates 2 --budget 10" RUN_LIMIT=${RAY_LIMIT:-140} \
  bash benchmarks/gpu_calls/ray_small_suite.sh > $R/ray.txt 2>&1; echo "ray done $(( $(date +%s) - T0 )) s" >> $R/env.txt) &
(KERNTAILOR_HOME=/tmp/kt-opt timeout ${OPT_LIMIT:-280} python3 -m kerntailor optimize problems/level3/llama_decoder_block.py \
  --target h200 --dtype bf16 --top 8 --budget 90 --candidates 3 --out /tmp/opt --json > $R/optimize.json 2> $R/optimize.log; \
  echo "optimize rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt) &
wait
cp -r /tmp/b_local/bench.json $R/ray/local_bench.json 2>/dev/null; cp /tmp/b_ray/bench.json $R/ray/ray_bench.json 2>/dev/null
tar czf $OUT/results.tgz -C /tmp results
cat $R/env.txt; tail -30 $R/ray.txt; tail -c 1500 $R/optimize.log
