#!/usr/bin/env bash
# `kerntailor generate` on a set of problem files on one GPU, all runs at once (the stopwatch's lock keeps the timed
# sections apart; the builds share the CPUs), each cut at GEN_LIMIT s, with `inspect`'s plan beside each run.
# Usage (one argument per run, NAME=FILE[:FLAGS], FLAGS with spaces quoted, e.g. "llama_bf16=problems/x.py:--dtype bf16"):
#   KT_COMMIT=<sha> GEN_LIMIT=480 CANDIDATES=3 BUDGET=40 bash benchmarks/gpu_calls/generate_set.sh RUN...
# A file missing on the device (not carried) is reported and skipped. Every run is --precision ieee with --target the
# GPU present (h100 or h200; TARGET overrides): measured, eager and torch.compile timed beside the generated module,
# A B A B (on another target generate predicts and times nothing). GEN_VERBOSE=-vv logs every trial.
# The runs share the host's cores: a host-bound problem (a call of tens of us, most of it Python and launches) times
# slower beside the others' builds (H100, 2026-12-05: decode b1's eager SDPA 101 us in such a call, 19.5 us alone);
# run such a problem alone for its numbers. Problems that run for milliseconds are not affected.
# Results: $OUT/results.tgz (logs, inspect output, report.json/md, kernel.py) and $OUT/summary.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/genset; rm -rf $R; mkdir -p $R; T0=$(date +%s)
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H100*) GPU=h100 ;; *) GPU=h200 ;; esac
TARGET=${TARGET:-$GPU}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) target $TARGET nproc $(nproc) limit ${GEN_LIMIT:-480} candidates ${CANDIDATES:-3} budget ${BUDGET:-40}"
  echo "runs: $*"; } > $R/env.txt
gen() {   # $1 name, $2 file, $3 extra flags
  if [ ! -f "$2" ]; then echo "$1 missing $2: not carried" >> $R/env.txt; return; fi
  python3 -m kerntailor inspect $2 --target $TARGET $3 > $R/$1.inspect.txt 2>&1
  KERNTAILOR_HOME=/tmp/kt-home-$1 timeout ${GEN_LIMIT:-480} python3 -m kerntailor generate $2 --target $TARGET \
    --precision ieee --candidates ${CANDIDATES:-3} --budget ${BUDGET:-40} --no-store --out $R/$1 $3 ${GEN_VERBOSE:--v} > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
}
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}; file=${rest%%:*}; flags=""
  [ "$rest" != "$file" ] && flags=${rest#*:}
  gen "$name" "$file" "$flags" &
done
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
    print(d.name, r.get("status"), "| passed", v.get("passed"), (r.get("reason") or v.get("reason") or "")[:200],
          "| us", t, "| wall", r.get("wall_s"))
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.inspect.txt")):
    plan = [line for line in f.read_text().splitlines() if line.startswith(("fusion plan", "  k", "  bytes as planned"))]
    print(f.name, *plan[:14], sep="\n  ")
PY
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp genset; cp $R/summary.txt $OUT/
