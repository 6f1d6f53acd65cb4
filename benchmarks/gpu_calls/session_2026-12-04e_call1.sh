#!/usr/bin/env bash
# GPU call 1 of the fifth session of 2026-12-04, one H200, everything at once (the stopwatch's lock and the memory
# ledger are files under /tmp shared by every process, so timed sections never overlap), each cut at LIMIT s:
#  (#20) `generate` level-3 50_ReLUSelfAttention fp32 (as KernelBench measures) and bf16: the verdict and baselines
#        that the fourth session's call 4 lost (cut in verify at 185 s);
#  (#14) `generate` level-2 18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp fp32 (no longer whole-file library);
#  (#19) `bench` level-2 17, 35, 46 bf16 after 0df252f (the conv library knob only where the conv group reduces or its
#        epilogue leaves the module: these three take the second pass again).
# Prepare, carry ["benchmarks/work/final", "benchmarks/work/l2again"]:
#   mkdir -p benchmarks/work/final benchmarks/work/l2again/level2
#   cp ../shared/kernelbench/level3/50_ReLUSelfAttention.py \
#     ../shared/kernelbench/level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py benchmarks/work/final/
#   for n in 17 35 46; do cp ../shared/kernelbench/level2/${n}_*.py benchmarks/work/l2again/level2/; done
# Everything comes back as $OUT/results.tgz (the device returns few files) and $OUT/summary.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/call1; rm -rf $R; mkdir -p $R; T0=$(date +%s); L=${LIMIT:-450}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc)"; } > $R/env.txt
gen() {   # $1 name, $2 file, $3 extra flags
  KERNTAILOR_HOME=/tmp/kt-home-$1 timeout $L python3 -m kerntailor generate $2 --target h200 \
    --precision ieee --candidates 2 --budget 20 --out $R/$1 $3 -v > $R/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
}
bench() {   # $1 name, $2 suite, $3 dtype
  local W=/tmp/kb-$1 H=/tmp/kt-home-$1; rm -rf $W $H; mkdir -p $R/$1
  KERNTAILOR_HOME=$H SUITE=$2 PART=all DTYPES=$3 PRECISION=ieee AGAIN=0 JOBS=3 CANDIDATES=2 BUDGET=20 \
    TIMEOUT=$L WORK=$W bash benchmarks/bench_suite.sh $R/$1/bench_$3 > $R/$1/suite_$3.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - T0 )) s" >> $R/env.txt
  cp $W/$3/bench.rows.jsonl $R/$1/rows_$3.jsonl 2>/dev/null; cp $W/log_$3.txt $R/$1/ 2>/dev/null
  python3 benchmarks/gpu_calls/rows_summary.py $R/$1/rows_$3.jsonl > $R/$1/summary.txt 2>&1
  rm -f $R/$1/bench_$3/store.sqlite; (cd $W && tar czf $R/$1/reports_$3.tgz $(find . -name report.json) 2>/dev/null)
}
gen relu_fp32 benchmarks/work/final/50_ReLUSelfAttention.py "" &
gen relu_bf16 benchmarks/work/final/50_ReLUSelfAttention.py "--dtype bf16" &
gen l2_18_fp32 benchmarks/work/final/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py "" &
bench l2again benchmarks/work/l2again bf16 &
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
cat $R/l2again/summary.txt >> $R/summary.txt 2>/dev/null
cat $R/env.txt $R/summary.txt; tar czf $OUT/results.tgz -C /tmp call1; cp $R/summary.txt $OUT/
