#!/usr/bin/env bash
# Issue #14, level 3: `kerntailor bench` in fp32 (measured on the H200) over the KernelBench level-3 files that the
# CPU survey (benchmarks/data/cpu_2026-12-04/level3_survey.md) found to capture and plan, cut at BENCH_LIMIT s
# (default 420; a cut pass keeps its rows in bench.rows.jsonl). One call; results in $OUT/results.tgz and
# $OUT/summary.txt.
#
# Prepare on the lead's machine (the device copy has no /work/shared), then run with carry ["benchmarks/work/level3"]:
#   mkdir -p benchmarks/work/level3 && for f in $(bash benchmarks/gpu_calls/level3_generate.sh --list); do
#     cp /work/shared/kernelbench/level3/$f.py benchmarks/work/level3/; done
#
# The list: small and mid-sized models first (a few fusion groups each). Left out, too large for one 450-s call
# with the rest: 10_ResNet101 (211 groups), 16_DenseNet201 (211), 15_DenseNet121 (131), 30_SwinTransformerV2 (322),
# 29_SwinMLP (139), 34_VanillaRNNHidden (769: its 256-step loop unrolled); a second call can take them with
# L3_FILES="10_ResNet101 15_DenseNet121" and JOBS=1. Refused on any machine (one line each, survey): 35_LSTM
# (forward draws torch.randn), 48/49_Mamba2 (einops is not installed), the pure-recurrent ones take the library
# path (36, 37, 39-42: every group an LSTM/GRU call).
FILES=${L3_FILES:-"4_LeNet5 2_ShallowWideMLP 3_DeepNarrowMLP 33_VanillaRNN 17_SqueezeNetFireModule \
13_DenseNet121TransitionLayer 8_ResNetBasicBlock 21_EfficientNetMBConv 31_VisionAttention 50_ReLUSelfAttention \
46_NetVladWithGhostClusters 47_NetVladNoGhostClusters 25_ShuffleNetUnit 14_DenseNet121DenseBlock \
6_GoogleNetInceptionModule 5_AlexNet 27_RegNet 38_LSTMBidirectional 11_VGG16 9_ResNet18"}
if [ "${1:-}" = --list ]; then echo $FILES; exit 0; fi
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
SRC=${L3_SUITE:-benchmarks/work/level3}
R=/tmp/results-l3; S=/tmp/kb-l3-suite; W=/tmp/kb-l3; H=/tmp/kt-home-l3
rm -rf $R $S $W $H; mkdir -p $R $S/level3
for f in $FILES; do cp "$SRC/$f.py" $S/level3/ 2>/dev/null || echo "missing $SRC/$f.py" >> $R/env.txt; done
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; echo "files: $FILES"; } >> $R/env.txt
T0=$(date +%s)
KERNTAILOR_HOME=$H SUITE=$S PART=all DTYPES=fp32 PRECISION=ieee AGAIN=0 JOBS=${JOBS:-2} \
  CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-420} WORK=$W \
  bash benchmarks/bench_suite.sh $R/bench_fp32 > $R/suite_fp32.log 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
cp $W/fp32/bench.rows.jsonl $R/rows_fp32.jsonl 2>/dev/null; cp $W/log_fp32.txt $R/ 2>/dev/null
rm -f $R/bench_fp32/kernels.tgz; (cd $W && tar czf $R/kernels_fp32.tgz --exclude='*.sqlite' --exclude='*.pyc' . 2>/dev/null)
python3 benchmarks/gpu_calls/rows_summary.py $R/rows_fp32.jsonl > $R/summary.txt 2>&1
cp $R/summary.txt $OUT/summary.txt; tar czf $OUT/results.tgz -C /tmp results-l3
cat $R/env.txt $R/summary.txt
rm -rf $R $S $W $H
