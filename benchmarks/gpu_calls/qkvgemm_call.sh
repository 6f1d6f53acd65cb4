#!/usr/bin/env bash
# Horizontal GEMM (plan/horizontal.py: Q, K and V projections of one x in one kernel, the grid over all their N
# tiles, A read once from HBM), one H200, one call. `generate` in bf16 (measured: eager and torch.compile timed beside
# the generated module, A B A B) on
#  - tests/data/qkvgemm/qkv_sdpa.py (3 projections + causal SDPA, small: launch-bound), qkv_gqa.py (GQA widths with
#    biases) and three_outputs_2d.py (three returned products, tiny),
#  - problems/level3/llama_decoder_block.py (7 kernels, 498 MB planned on the CPU; 9 kernels, 532 MB before),
# The decoder block's report.json times its QKV kernel (k1) beside the others; its kernel.py shows the schedule won.
# Each generate run cut at LIMIT s (default 240); the runs go two at a time (the stopwatch's lock keeps timed sections
# apart). Nothing to prepare or carry: every file is in the repository. Results: $OUT/results.tgz (logs,
# report.json/md, kernel.py) and $OUT/summary.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/qkvgemm; rm -rf $R; mkdir -p $R; T0=$(date +%s); L=${LIMIT:-240}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
gen() {   # $1 name, $2 file, $3 extra flags
  KERNTAILOR_HOME=/tmp/kt-home-$1 timeout $L python3 -m kerntailor generate $2 --target h200 \
    --precision ieee --candidates ${CANDIDATES:-4} --budget ${BUDGET:-40} --no-store --out $R/$1 $3 -v > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
}
gen qkv_sdpa_bf16 tests/data/qkvgemm/qkv_sdpa.py "--dtype bf16" &
gen qkv_gqa_bf16 tests/data/qkvgemm/qkv_gqa.py "--dtype bf16" &
wait
gen three_outputs_2d_bf16 tests/data/qkvgemm/three_outputs_2d.py "--dtype bf16" &
gen llama_block_bf16 problems/level3/llama_decoder_block.py "--dtype bf16" &
wait
python3 - $R > $R/summary.txt 2>&1 <<'PY'
import json, sys, pathlib
for d in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    rep = d / "report.json"
    if not rep.exists():
        continue
    r = json.loads(rep.read_text())
    v = r.get("verdict") or {}
    t = {x["name"]: round(x["median_s"] * 1e6, 1) for x in (v.get("timing") or {}).get("timings", [])}
    print(d.name, r.get("status"), "|", (r.get("reason") or "")[:200], "| us", t, "| wall", r.get("wall_s"))
PY
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp qkvgemm; cp $R/summary.txt $OUT/
