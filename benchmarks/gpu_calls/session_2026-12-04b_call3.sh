#!/usr/bin/env bash
# GPU call 3 of the second session of 2026-12-04, three parts in one call, each cut by its own limit, each writing
# under $OUT as it ends:
# (1, #19) gpu_calls/l2convt_call.sh on benchmarks/work/l2convt_tails (level-2 36 42 44 49 58 91, copied unchanged:
#     transposed convolutions whose reductions now join the conv's kernel, helper l2convt), bf16, cut at L2T_LIMIT s;
# (2, #14) gpu_calls/level3_generate.sh (fp32 bench of level-3 models, small ones first), cut at L3_LIMIT s;
# (3, #19) benchmarks/libtail_profile.py on 31_Conv2d_Min_Add_Multiply, bf16: per-kernel device times of eager,
#     torch.compile and the module calls 1-2 emitted with the library's conv + a generated tail
#     (benchmarks/work/libtail: the problem file and that generated.py), if time is left.
# Run from the repository root with carry ["benchmarks/work/l2convt_tails", "benchmarks/work/level3",
# "benchmarks/work/libtail"]; results under $OUT/l2t, $OUT/l3, $OUT/libtail.
export PYTHONPATH=src PYTHONUNBUFFERED=1
O=$OUT; T0=$(date +%s)
mkdir -p $O/l2t $O/l3 $O/libtail
OUT=$O/l2t L2_SUITE=benchmarks/work/l2convt_tails DTYPE=bf16 BENCH_LIMIT=${L2T_LIMIT:-200} \
  bash benchmarks/gpu_calls/l2convt_call.sh > $O/l2t/call.log 2>&1
echo "l2t rc=$? $(( $(date +%s) - T0 )) s" | tee -a $O/times.txt; tail -12 $O/l2t/call.log
OUT=$O/l3 JOBS=${L3_JOBS:-3} BENCH_LIMIT=${L3_LIMIT:-200} L3_FILES="${L3_FILES:-4_LeNet5 2_ShallowWideMLP 3_DeepNarrowMLP \
33_VanillaRNN 31_VisionAttention 50_ReLUSelfAttention 17_SqueezeNetFireModule 8_ResNetBasicBlock \
13_DenseNet121TransitionLayer 21_EfficientNetMBConv 5_AlexNet 9_ResNet18}" \
  bash benchmarks/gpu_calls/level3_generate.sh > $O/l3/call.log 2>&1
echo "l3 rc=$? $(( $(date +%s) - T0 )) s" | tee -a $O/times.txt; tail -16 $O/l3/call.log
L=benchmarks/work/libtail
timeout ${LIBTAIL_LIMIT:-90} python3 benchmarks/libtail_profile.py $L/31_Conv2d_Min_Add_Multiply.py $L/31_generated.py \
  --out $O/libtail/libtail_31.json > $O/libtail/libtail_31.log 2>&1
echo "libtail rc=$? $(( $(date +%s) - T0 )) s" | tee -a $O/times.txt; cut -c1-200 $O/libtail/libtail_31.log | tail -40
