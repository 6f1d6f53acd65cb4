#!/usr/bin/env bash
# Sixth session of 2026-12-07: (1) the three level-3 nets of benchmarks/work/l3nets (19_MobileNetV1, 20_MobileNetV2,
# 22_EfficientNetB0 copied unchanged from ../shared/kernelbench/level3) through bench as session_2026-12-06c.sh runs
# them (fp32 ieee, --jobs 6 --candidates 3 --budget 30), at 95397fd or later: 20_MobileNetV2's rows edge case ran out of
# GPU memory beside the other jobs' cases in the fifth session (h200_2026-12-07e) and is now judged again alone;
# (2) where each net's time goes: benchmarks/gpu_calls/profile_module.py on every generated.py / kernel.py the bench
# left, beside the problem's eager model (wall time, kernel time, launches, CUDA-graph replay).
# Usage: KT_COMMIT=<sha> BENCH_LIMIT=<s> bash benchmarks/gpu_calls/session_2026-12-07f.sh; carry ["benchmarks/work/l3nets"].
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=src
rm -rf /tmp/kb-bench /tmp/benchout /tmp/kt*
ALONE=" " BENCH_LIMIT=${BENCH_LIMIT:-430} SAMPLE=benchmarks/work/l3nets bash benchmarks/gpu_calls/session_2026-12-06c.sh
T2=$(date +%s)
for d in /tmp/kb-bench/fp32/level3/*/; do
  n=$(basename $d); mods=$(ls $d/generated.py $d/kernel.py 2>/dev/null)
  [ -z "$mods" ] && continue
  timeout 90 python3 benchmarks/gpu_calls/profile_module.py benchmarks/work/l3nets/level3/$n.py $mods \
    --out $OUT/profile_$n.json > $OUT/profile_$n.log 2>&1
  echo "profile $n rc=$? $(( $(date +%s) - T2 )) s"; cat $OUT/profile_$n.log | grep -v Warning | tail -4
done
nvidia-smi --query-gpu=name,memory.total --format=csv > $OUT/gpu.txt
python3 -c "import torch,triton,sys;print(torch.__version__,triton.__version__,sys.version)" > $OUT/versions.txt
echo "KT_COMMIT=${KT_COMMIT:-?}" >> $OUT/versions.txt
