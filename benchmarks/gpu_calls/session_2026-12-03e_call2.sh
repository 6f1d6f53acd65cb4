#!/usr/bin/env bash
# GPU call 2 of 2026-12-03 (fourth session), after the merges of coopfix, convgen and graphswap: (1) the cooperative
# split as the tool now generates it beside the probe's P4 (#18 item 3: benchmarks/coop_probe.py); (2) the generated
# convolution against cuDNN and torch.compile, bf16, five KernelBench files (#19: conv_gen_probe.py); (3) the
# MobileNetV2 of level 3 profiled with measured eager times (#21: profile --measured); (4) Llama-3.2-1B decode
# profiled (measured) and optimized with graph mode (#21: hf_llama.sh, SHAPES=decode, needs .hf-bundle carried).
# One archive ($OUT/results.tgz) rewritten after each step; hf_llama.sh writes its own ($OUT/hf_llama.tgz).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
timeout ${COOP_LIMIT:-110} python3 benchmarks/coop_probe.py --out $R/coop.json > $R/coop.log 2>&1
pack coop $?
KB=benchmarks/work/kb; mkdir -p $R/conv
timeout ${CONV_LIMIT:-200} python3 benchmarks/conv_gen_probe.py $(ls $KB/level1/{63,67,87,82}_*.py $KB/level2/71_Conv2d_*.py) \
  --dtype bf16 --deadline-s ${CONV_DEADLINE:-150} --out $R/conv/conv_gen_bf16.json > $R/conv/conv_gen_bf16.log 2>&1
pack conv $?
rm -rf $R/conv/*_modules
timeout ${PROFILE_LIMIT:-60} python3 -m kerntailor profile $KB/level3/20_MobileNetV2.py --target h200 --top 5 \
  --out $R/profile_mobilenetv2 --json > $R/profile_mobilenetv2.json 2> $R/profile_mobilenetv2.log
pack profile_mobilenetv2 $?
SHAPES=decode PROFILE=1 PROFILE_LIMIT=${PROFILE_LIMIT:-60} OPT_LIMIT=${OPT_LIMIT:-180} KT_COMMIT=${KT_COMMIT:-unknown} \
  bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf_llama $?
cat $R/env.txt; tail -c 1500 $R/coop.log; tail -c 2500 $R/conv/conv_gen_bf16.log; tail -c 3000 $R/hf_llama.txt
