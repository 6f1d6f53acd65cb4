#!/usr/bin/env bash
# GPU call 4 of the fourth session of 2026-12-04 (the session's last ~220 s of device time): three `generate` runs
# at once on one GPU (the stopwatch's lock serializes timed sections), each cut at GEN_LIMIT s (default 185):
#  (#20) level-3 50_ReLUSelfAttention in fp32 (as KernelBench measures) and bf16: the ReLU attention now one generated
#        flash-style kernel (Attention score "relu");
#  (#14) level-2 18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp, fp32: no longer the whole-file library path (the
#        refused group is cut at the node codegen names).
# Prepare, carry ["benchmarks/work/final"]:
#   mkdir -p benchmarks/work/final && cp ../shared/kernelbench/level3/50_ReLUSelfAttention.py \
#     ../shared/kernelbench/level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py benchmarks/work/final/
# Everything comes back as $OUT/results.tgz (the device returns few files) and $OUT/summary.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/call4; rm -rf $R; mkdir -p $R; T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
gen() {   # $1 name, $2 file, $3 extra flags
  KERNTAILOR_HOME=/tmp/kt-home-$1 timeout ${GEN_LIMIT:-185} python3 -m kerntailor generate $2 --target h200 \
    --precision ieee --candidates 2 --budget 20 --out $R/$1 $3 -v > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
}
gen relu_fp32 benchmarks/work/final/50_ReLUSelfAttention.py "" &
gen relu_bf16 benchmarks/work/final/50_ReLUSelfAttention.py "--dtype bf16" &
gen l2_18_fp32 benchmarks/work/final/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py "" &
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
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp call4; cp $R/summary.txt $OUT/
