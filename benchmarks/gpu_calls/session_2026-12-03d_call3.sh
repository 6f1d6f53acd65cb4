#!/usr/bin/env bash
# GPU call of 2026-12-03 (third session), the last of its device budget (call 2's script was refused at start; this
# one takes its most needed parts and the Llama decoder): (1) the long-row probe (#18 item 3); (2) the library
# convolution's layout, channels-last with the output kept (#19); (3) Llama-3.2-1B from transformers, profile and
# optimize on both shapes (#21, hf_llama.sh with shorter limits); (4) optimize's CUDA-graph test; (5) fp32 attention
# under tf32x3 (sdpa only). The archive is rewritten after every step, so a cut call still returns what ran.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; mkdir -p $R/probe
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results $( [ -d /tmp/hf_results ] && echo hf_results); }
timeout ${PROBE_LIMIT:-100} python3 benchmarks/longrow_probe.py --out $R/probe/longrow_probe.json > $R/probe/probe.log 2>&1
pack probe $?
timeout ${CONV_LIMIT:-110} python3 benchmarks/conv_layout.py benchmarks/work/kb/level2/{65,35,54,69,91}_*.py \
  --deadline-s 80 --out $R/conv_layout_fp32.json > $R/conv_layout.log 2>&1
pack conv_layout $?
OUT=/tmp/hf_out KT_COMMIT=${KT_COMMIT:-unknown} PROFILE_LIMIT=30 OPT_LIMIT=${OPT_LIMIT:-110} BUDGET=40 TOP_PREFILL=2 \
  bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf_llama $?
timeout 40 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_optimize_cost.py > $R/gpu_tests.log 2>&1
pack gpu_tests $?
timeout ${ATT_LIMIT:-45} python3 benchmarks/attention.py --dtype fp32 --precision tf32x3 --only sdpa --configs grid \
  --out $R/attention > $R/attention.log 2>&1
pack attention $?
cat $R/env.txt; grep -v "^ " $R/probe/probe.log | tail -c 3000; tail -c 1500 $R/conv_layout.log; tail -c 1500 $R/hf_llama.txt
tail -c 400 $R/gpu_tests.log; grep -h '^{' $R/attention.log | cut -c1-300
