#!/usr/bin/env bash
# Issue #20 item 3 (branch attnstore): the attention kernel stores O at the strides of the copy that merges the heads
# (`y.transpose(1, 2).contiguous().view(B, T, C)`), so that copy kernel is gone (level-3 50 bf16 as planned: 4 -> 3
# kernels, 209.06 -> 158.73 MB). `kerntailor generate` in bf16 on the H200 with the baselines (eager, torch.compile)
# and the referee's verdict, three runs at once on one GPU (the stopwatch's lock serializes the timed sections), each
# cut at GEN_LIMIT s (default 330: the call stays under 400 s): level-3 43_MinGPTCausalAttention, 50_ReLUSelfAttention
# and 31_VisionAttention (its (B·H, L, D) -> (L, B·H, D) copy is a layout store too). A file not carried is skipped.
# Prepare (the device copy has no /work/shared), then run with carry ["benchmarks/work/attnstore"]:
#   mkdir -p benchmarks/work/attnstore && for f in 43_MinGPTCausalAttention 50_ReLUSelfAttention 31_VisionAttention; do
#     cp ../shared/kernelbench/level3/$f.py benchmarks/work/attnstore/ 2>/dev/null; done
# Everything comes back as $OUT/results.tgz, and $OUT/summary.txt (status, verdict, timings in us per run).
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/attnstore; rm -rf $R; mkdir -p $R; T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
gen() {   # $1 the file's stem under benchmarks/work/attnstore
  local f=benchmarks/work/attnstore/$1.py
  if [ ! -f $f ]; then echo "$1 missing: not carried" >> $R/env.txt; return; fi
  python3 -m kerntailor inspect $f --target h200 --dtype bf16 > $R/$1.inspect.txt 2>&1
  KERNTAILOR_HOME=/tmp/kt-home-$1 timeout ${GEN_LIMIT:-330} python3 -m kerntailor generate $f --target h200 \
    --dtype bf16 --precision ieee --candidates ${CANDIDATES:-3} --budget ${BUDGET:-30} --out $R/$1 -v \
    > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
}
for f in 43_MinGPTCausalAttention 50_ReLUSelfAttention 31_VisionAttention; do gen $f & done
wait
python3 - $R > $R/summary.txt 2>&1 <<'PY'
import json, pathlib, sys
for d in sorted(p for p in pathlib.Path(sys.argv[1]).iterdir() if p.is_dir()):
    rep = d / "report.json"
    if not rep.exists():
        print(d.name, "no report.json")
        continue
    r = json.loads(rep.read_text())
    v = r.get("verdict") or {}
    t = {x["name"]: round(x["median_s"] * 1e6, 1) for x in (v.get("timing") or {}).get("timings", [])}
    print(d.name, r.get("status"), "| passed", v.get("passed"), (v.get("reason") or "")[:200], "| us", t,
          "| wall", r.get("wall_s"))
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.inspect.txt")):
    plan = [line for line in f.read_text().splitlines() if line.startswith(("fusion plan", "  k", "  bytes as planned"))]
    print(f.name, *plan, sep="\n  ")
PY
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp attnstore; cp $R/summary.txt $OUT/
