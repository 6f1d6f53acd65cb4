#!/usr/bin/env bash
# GPU call 1 of the sixth session of 2026-12-05: GQA packing (codegen/attention.py's PACK knob) at a Llama decode step
# (GQA 32 query heads on 8 KV heads, Lk 4096, D 128, bf16), batch 1 and 32, against the unpacked schedules, eager and
# torch.compile:
#  1. benchmarks/host_overhead.py: GPU time per call in a CUDA graph (graph_us: no host work) and the stopwatch's
#     median, eager and each kernel.py of benchmarks/work/pack/ (emitted on the CPU from this commit by
#     benchmarks/gpu_calls/pack_emit.py; carried);
#  2. benchmarks/attn_probe.py on both batches at packed labels: each output checked against eager's before it is
#     timed, interleaved with eager and torch.compile.
# Usage: KT_COMMIT=<sha> bash benchmarks/gpu_calls/session_2026-12-05f_call1.sh   (carry ["benchmarks/work/pack"])
export PYTHONPATH=src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/env.txt
python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])" >> $OUT/env.txt
echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ)" >> $OUT/env.txt
for b in b1 b32; do
  timeout 150 python3 benchmarks/host_overhead.py benchmarks/data/attn_probe/sdpa_gqa_decode_$b.py --dtype bf16 \
    benchmarks/work/pack/${b}_*.py --out $OUT/host_overhead_$b.json > $OUT/host_overhead_$b.log 2>&1
  echo "host_overhead $b rc=$?"; grep -v '^ ' $OUT/host_overhead_$b.log | tail -12
done
timeout 250 python3 benchmarks/attn_probe.py --only decode_b32,decode_b1 --max-wall 200 \
  --schedules 16x64/4w/2s/pack,16x128/4w/3s/pack,16x64/4w/2s/split16/pack,16x64/4w/2s/split32/pack \
  --out $OUT/attn_probe_pack.json > $OUT/attn_probe.log 2>&1
echo "attn_probe rc=$?"
python3 - <<'PY'
import json, os
d = json.load(open(os.environ["OUT"] + "/attn_probe_pack.json"))
for r in d["rows"]:
    print(r.get("problem"), r.get("schedule"), "us", r.get("us"), "eager", r.get("eager_us"), "compile", r.get("compile_us"), r.get("eager_backend"), r.get("err"), r.get("error"))
PY
