#!/usr/bin/env bash
# Dual GEMM (plan/dual.py: SwiGLU's gate and up products in one kernel, two accumulators, A loaded once), one H200,
# one call. `generate` in bf16 (measured: eager and torch.compile timed beside the generated module, A B A B) on
#  - tests/data/dualgemm/swiglu.py (3-d x, 2 x 128 x 256 -> 512: small, launch-bound) and geglu_2d.py (tiny),
#  - problems/level3/swiglu_mlp.py (Llama MLP, 4096 x 4096 -> 14336: the dual kernel's compute-bound case),
#  - problems/level3/llama_decoder_block.py (11 kernels, 1.20 GB planned on the CPU, 12 / 1.42 GB before),
# and swiglu_mlp in fp32 beside (ieee: the dual default tiles 128 x 64 there). Each run cut at LIMIT s (default 240);
# the runs go two at a time (the stopwatch's lock keeps timed sections apart). Nothing to prepare or carry: every
# file is in the repository. Results: $OUT/results.tgz (logs, report.json/md, kernel.py) and $OUT/summary.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/dualgemm; rm -rf $R; mkdir -p $R; T0=$(date +%s); L=${LIMIT:-240}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
gen() {   # $1 name, $2 file, $3 extra flags
  KERNTAILOR_HOME=/tmp/kt-home-$1 timeout $L python3 -m kerntailor generate $2 --target h200 \
    --precision ieee --candidates ${CANDIDATES:-4} --budget ${BUDGET:-40} --no-store --out $R/$1 $3 -v > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
}
gen swiglu_bf16 tests/data/dualgemm/swiglu.py "--dtype bf16" &
gen geglu_2d_bf16 tests/data/dualgemm/geglu_2d.py "--dtype bf16" &
wait
gen swiglu_mlp_bf16 problems/level3/swiglu_mlp.py "--dtype bf16" &
gen swiglu_mlp_fp32 problems/level3/swiglu_mlp.py "" &
wait
gen llama_block_bf16 problems/level3/llama_decoder_block.py "--dtype bf16"
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
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp dualgemm; cp $R/summary.txt $OUT/
