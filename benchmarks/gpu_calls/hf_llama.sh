#!/usr/bin/env bash
# GPU call (issue #21 item 4): Llama-3.2-1B's decoder from transformers (problems/models/llama3_2_1b_{prefill,decode}.py)
# on the one-GPU H200: `kerntailor optimize` with graph mode (eager, torch.compile and the optimized model timed end to
# end on the GPU, also under torch.compile and in a CUDA graph) for both shapes, decode first, bf16, small budgets;
# with PROFILE=1 also `kerntailor profile`; everything back as ONE archive ($OUT/hf_llama.tgz: the device returns at
# most 8 files), and a summary per shape on stdout (groups swapped/skipped and why, times, phases).
# GPU time: two optimize runs of at most OPT_LIMIT (240 s) each, one after the other: under 9 minutes (PROFILE=1 adds
# two profiles of at most PROFILE_LIMIT 60 s: then set OPT_LIMIT=200, or SHAPES=decode).
#
# How transformers gets to the H200 box: it has Python 3.12, torch and triton but no transformers and no package
# index, and a call carries at most 64 MiB. So transformers 5.23.0 travels as a site folder of cp312 manylinux wheels,
# xz-compressed in .hf-bundle/site.tar.xz (git-ignored), transformers' models/ cut to llama and auto (59 MB -> 9 MB),
# without numpy, filelock and typing_extensions (the box has them with torch; numpy >= 2.4 breaks triton's
# interpreter) or hf_xet (downloads only); extracted on the box to /tmp/hf-site, ahead of src on PYTHONPATH.
# Build it ONCE on the development machine:
#   pip download transformers==5.23.0 --python-version 3.12 --platform manylinux2014_x86_64 \
#     --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --only-binary=:all: -d /tmp/hfwheels
#   mkdir /tmp/hf-site-312 && for w in /tmp/hfwheels/*.whl; do python3 -m zipfile -e "$w" /tmp/hf-site-312/; done
#   bash benchmarks/gpu_calls/hf_llama.sh bundle /tmp/hf-site-312        # writes .hf-bundle/{site.tar.xz,python}
# then run this script on the device with carry [".hf-bundle"].
set -u
if [ "${1:-}" = bundle ]; then
  site=${2:?the folder the cp312 wheels were unzipped into}
  stage=$(mktemp -d)
  for p in ${BUNDLE_PACKAGES:-transformers tokenizers safetensors huggingface_hub regex tqdm yaml _yaml httpx2 httpcore2 \
           h11 anyio idna truststore packaging}; do
    cp -r "$site/$p" "$stage/" || exit 1
  done
  # the metadata of those alone (transformers checks its dependencies' versions by it at import): a dist-info of a
  # package left out would stand for the box's own copy
  for d in ${BUNDLE_DISTS:-transformers tokenizers safetensors huggingface_hub regex tqdm pyyaml httpx2 httpcore2 h11 anyio \
           idna truststore packaging}; do
    cp -r "$site"/$d-*.dist-info "$stage/" || exit 1
  done
  # transformers' models/: llama (the model) and auto (the name mappings `import transformers` reads); the others
  # are imported lazily, by name, and never here
  find "$stage/transformers/models" -mindepth 1 -maxdepth 1 -type d ! -name llama ! -name auto -exec rm -rf {} +
  find "$stage" -name __pycache__ -type d -exec rm -rf {} +
  du -sh "$stage"
  rm -rf .hf-bundle && mkdir -p .hf-bundle
  tar -cf - -C "$stage" . | xz -T2 -6 > .hf-bundle/site.tar.xz
  grep -h "^Tag:" "$site"/regex-*.dist-info/WHEEL | head -1 | cut -d' ' -f2 | cut -d- -f1 > .hf-bundle/python  # cp312
  rm -rf "$stage"
  ls -la .hf-bundle
  exit 0
fi

OUT=${OUT:-/tmp/hf_llama}
R=/tmp/hf_results; rm -rf $R; mkdir -p "$OUT" $R
python3 -c "import sys; t = 'cp%d%d' % sys.version_info[:2]; b = open('.hf-bundle/python').read().strip(); \
assert t == b, f'the bundle is for {b}, this python3 is {t}'" || { echo "no .hf-bundle for this python3: build it (header)"; exit 1; }
mkdir -p /tmp/hf-site && tar -xJf .hf-bundle/site.tar.xz -C /tmp/hf-site || { echo "no .hf-bundle/site.tar.xz: build it (header)"; exit 1; }
export PYTHONPATH=/tmp/hf-site:src PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, transformers, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'triton', triton.__version__, 'transformers', transformers.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} $(date -u +%FT%TZ)"; } > $R/env.txt 2>&1
T0=$(date +%s)
# optimize with graph mode (optimizing/graph.py, issue #21): decode's hottest groups (DynamicCache's concatenations,
# attention with ops outside its module, norms returning 3 values) span modules, so graph mode takes them; module
# swaps take the projections. -v logs each phase's seconds as it ends (profile, each group's generate, each swap with
# its whole-model check, end to end): the prefill run that went past 110 s says where its time goes even when cut.
# GRAPH=0: --no-graph (module swaps only, as before). PROFILE=1: also the standalone `profile` of each shape.
# LEAN=1: first benchmarks/graph_lean.py per shape (at most LEAN_LIMIT 150 s each): eager against graph mode's graph
# with no swap, before and after optimizing/lean.py (times, CUDA kernels and ATen ops per call).
for shape in ${SHAPES:-decode prefill}; do
  f=problems/models/llama3_2_1b_$shape.py
  [ $shape = prefill ] && top=${TOP_PREFILL:-4} || top=${TOP_DECODE:-14}
  if [ "${PROFILE:-0}" = 1 ]; then
    timeout ${PROFILE_LIMIT:-60} python3 -m kerntailor profile $f --target h200 --dtype bf16 --top 5 \
      --out $R/profile_$shape --json > $R/profile_$shape.json 2> $R/profile_$shape.log
    echo "profile $shape rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
  fi
  if [ "${LEAN:-0}" = 1 ]; then   # graph mode's own cost, no swap: eager vs the graph before/after lean.py
    timeout ${LEAN_LIMIT:-150} python3 benchmarks/graph_lean.py $f --dtype bf16 --out $R/graph_lean_$shape.json \
      > $R/graph_lean_$shape.log 2>&1
    echo "graph_lean $shape rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
  fi
  graph=$([ "${GRAPH:-1}" = 0 ] && echo --no-graph || echo --graph)
  KERNTAILOR_HOME=/tmp/kt-hf timeout ${OPT_LIMIT:-240} python3 -m kerntailor optimize $f --target h200 --dtype bf16 \
    --top $top --budget ${BUDGET:-90} --candidates ${CANDIDATES:-3} --out $R/optimize_$shape $graph -v --json \
    > $R/optimize_$shape.json 2> $R/optimize_$shape.log
  echo "optimize $shape $graph rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
done
tar czf "$OUT/hf_llama.tgz" -C /tmp hf_results
cat $R/env.txt
for shape in ${SHAPES:-decode prefill}; do
  echo "== $shape"
  [ -f $R/graph_lean_$shape.log ] && tail -4 $R/graph_lean_$shape.log
  python3 - $R/optimize_$shape.json <<'PY' || grep "kerntailor.optimizing.run\|error" $R/optimize_$shape.log | tail -30
import json, sys
doc = json.load(open(sys.argv[1]))
for g in doc["groups"]:
    print(f"{g['rank']:>2} {g['group']:<6} {g['family']:<10} {g['share']:6.1%} {g['status']:<8} {g.get('mode', ''):<6} "
          f"{g['module'][:40]:<40} {g['reason'][:110]}")
t = doc["timing"]
print("seconds:", {k: round(v * 1e6, 1) for k, v in t.get("seconds", {}).items()}, "us;", t.get("speedup"),
      t.get("errors") or "", t.get("note", ""))
print("first calls, torch.compile's compile included (s):", t.get("first_call_s"))
print("check:", doc["check"])
print("phases (s):", doc.get("phases"))
PY
done
