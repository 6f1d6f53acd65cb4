#!/usr/bin/env bash
# planned kernels and bytes, before (803575f) and after (HEAD) this session's plan changes; CPU, target h200
out=$1
echo "| problem | dtype | kernels 803575f | bytes 803575f | kernels $(git -C /work/main rev-parse --short HEAD) | bytes after | minimum bytes |" > $out
echo "|---|---|---|---|---|---|---|" >> $out
for spec in "problems/level3/llama_decoder_block.py fp32" "problems/level3/llama_decoder_block.py bf16" \
            "../shared/kernelbench/level3/28_VisionTransformer.py fp32" "../shared/kernelbench/level3/29_SwinMLP.py fp32" \
            "../shared/kernelbench/level3/30_SwinTransformerV2.py fp32" "../shared/kernelbench/level3/31_VisionAttention.py fp32" \
            "../shared/kernelbench/level3/50_ReLUSelfAttention.py fp32" "../shared/kernelbench/level3/32_ConvolutionalVisionTransformer.py fp32" \
            "problems/level3/swiglu_mlp.py fp32"; do
  set -- $spec; f=$1; d=$2; row="| $(basename $f .py) | $d"
  for root in /tmp/base /work/main; do
    dt=""; [ $d = bf16 ] && dt="--dtype bf16"
    txt=$(cd $root && PYTHONPATH=src timeout 300 /work/main/.venv/bin/python -m kerntailor inspect $( [ ${f:0:2} = .. ] && echo /work/shared/${f#../shared/} || echo $f) --target h200 $dt 2>&1)
    k=$(echo "$txt" | sed -n 's/^fusion plan: \([0-9]*\) kernel.*/\1/p'); b=$(echo "$txt" | sed -n 's/.*bytes as planned *\([0-9.]* [KMG]B\).*/\1/p')
    m=$(echo "$txt" | sed -n 's/.*minimum bytes *\([0-9.]* [KMG]B\).*/\1/p')
    row="$row | $k | $b"
  done
  echo "$row | $m |" >> $out
done
