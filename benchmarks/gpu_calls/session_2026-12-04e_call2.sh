#!/usr/bin/env bash
# GPU call 2 of the fifth session of 2026-12-04 (#14, level 3's wall time): `generate` on small level-3 models in fp32
# (as KernelBench measures), ONE AT A TIME on an otherwise idle H200, each cut at LIMIT s, -v logs with stage times,
# to see where a level-3 model's minutes go (12-04d call 1: a 3-job bench finished 1 of 20 models in 490 s).
# Prepare, carry ["benchmarks/work/l3small"]:
#   mkdir -p benchmarks/work/l3small/level3
#   for f in 4_LeNet5 8_ResNetBasicBlock 3_DeepNarrowMLP; do cp ../shared/kernelbench/level3/$f.py benchmarks/work/l3small/level3/; done
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/call2; rm -rf $R; mkdir -p $R; T0=$(date +%s); L=${LIMIT:-140}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
for f in ${FILES:-4_LeNet5 8_ResNetBasicBlock 3_DeepNarrowMLP}; do
  KERNTAILOR_HOME=/tmp/kt-home-$f timeout $L python3 -m kerntailor generate benchmarks/work/l3small/level3/$f.py \
    --target h200 --precision ieee --candidates 2 --budget 20 --out $R/$f -vv > $R/$f.log 2>&1
  echo "$f rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
done
python3 - $R > $R/summary.txt 2>&1 <<'PY'
import json, sys, pathlib
for d in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    rep = d / "report.json"
    if not rep.exists():
        continue
    r = json.loads(rep.read_text())
    v = r.get("verdict") or {}
    t = {x["name"]: round(x["median_s"] * 1e6, 1) for x in (v.get("timing") or {}).get("timings", [])}
    print(d.name, "| us", t, "| wall", round(r.get("wall_s") or 0, 1), "| stages", r.get("stage_s"),
          "| kernels", len(r.get("kernels") or []))
PY
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp call2; cp $R/summary.txt $OUT/
