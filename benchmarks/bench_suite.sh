#!/usr/bin/env bash
# `kerntailor bench` over one part of problems/ on a GPU machine, fp32 and bf16 side by side (one GPU each
# when two are visible), then the same again to show the second run is served from the store.
#
#   PART=memory-bound JOBS=4 CANDIDATES=8 bash benchmarks/bench_suite.sh OUTDIR
#
# Writes OUTDIR/bench_{fp32,bf16}.json, OUTDIR/bench_{fp32,bf16}_again.json (Markdown: `kerntailor.generate.bench.render_bench`), OUTDIR/store.sqlite,
# OUTDIR/kernels.tgz (every emitted kernel.py and report) and OUTDIR/env.txt (machine and toolchain).
set -u
OUTDIR=${1:?usage: bench_suite.sh OUTDIR}
SUITE=${SUITE:-problems}   # a folder of problem files: problems, or a KernelBench sample (benchmarks/kernelbench_sample.py)
PART=${PART:-memory-bound}
JOBS=${JOBS:-4}
CANDIDATES=${CANDIDATES:-8}
BUDGET=${BUDGET:-60}
PRECISION=${PRECISION:-ieee}
# the GPU here by default (the lent device is an H100 or an H200): a target that is not this GPU runs in predicted
# mode, which a call meant to measure must not do silently (2026-12-06: level3_generate.sh's call 2 did)
TARGET=${TARGET:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | \
  sed -n 's/.*H200.*/h200/p; s/.*H100.*/h100/p; s/.*A100.*/a100/p')}
TARGET=${TARGET:-h200}
ONLY=${ONLY:-}            # e.g. "--only relu --only softmax" to run a few problems
DTYPES=${DTYPES:-"fp32 bf16"}   # one of them alone on a machine too small for both in one call
RANKER_FROM=${RANKER_FROM:-}    # a store (.sqlite or .sqlite.gz) of earlier measurements on TARGET: train the
                                # learned cost model on it first, so the search times only its top schedules
# TIMEOUT / TIMEOUT_AGAIN: seconds for each first / second pass (a cut pass keeps its rows in bench.rows.jsonl);
# AGAIN=0 skips the second pass
export PYTHONPATH=${PYTHONPATH:-src} PYTHONUNBUFFERED=1
export KERNTAILOR_HOME=${KERNTAILOR_HOME:-/tmp/kerntailor-home}
WORK=${WORK:-/tmp/kerntailor-bench}
mkdir -p "$OUTDIR" "$WORK"
GPUS=$(python3 -c "import torch; print(torch.cuda.device_count())")
{
  date -u +%Y-%m-%dT%H:%M:%SZ; hostname; nproc
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
  echo "commit ${KT_COMMIT:-unknown}"   # the device copy has no .git: pass the commit
} > "$OUTDIR/env.txt"

run_dtype() {  # $1 dtype (fp32 = as written), $2 GPU index, $3 suffix
  local dtype=$1 gpu=$2 suffix=$3 flag=""
  [ "$dtype" != fp32 ] && flag="--dtype $dtype"
  local cmd="python3 -m kerntailor bench $SUITE --part $PART --target $TARGET $flag --precision $PRECISION \
--candidates $CANDIDATES --budget $BUDGET --strategy ${STRATEGY:-random} --jobs $JOBS $ONLY --out $WORK/${dtype}${suffix}"
  # GPU index $gpu among those this script was given (CUDA_VISIBLE_DEVICES set by the caller: two suites
  # side by side, one GPU each), else among all
  local dev=$gpu; [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && dev=$(echo "$CUDA_VISIBLE_DEVICES" | cut -d, -f$((gpu + 1)))
  echo "CUDA_VISIBLE_DEVICES=$dev $cmd" > "$WORK/cmd_${dtype}${suffix}.txt"
  local limit=${TIMEOUT:-0}; [ -n "$suffix" ] && limit=${TIMEOUT_AGAIN:-0}   # 0: no limit
  CUDA_VISIBLE_DEVICES=$dev timeout "$limit" $cmd > "$WORK/log_${dtype}${suffix}.txt" 2>&1
  echo "$dtype$suffix rc=$? $(date -u +%T)" >> "$OUTDIR/env.txt"
}

both() {  # fp32 and bf16 at once on two GPUs, or one after the other on one
  if [ "$GPUS" -ge 2 ] && [ "$DTYPES" = "fp32 bf16" ]; then
    run_dtype fp32 0 "$1" & run_dtype bf16 1 "$1" & wait
  else
    for d in $DTYPES; do run_dtype "$d" 0 "$1"; done
  fi
}

if [ -n "$RANKER_FROM" ]; then   # the model is trained in its own home, and only the model file moves
  mkdir -p /tmp/kerntailor-train/models "$KERNTAILOR_HOME/models"
  case "$RANKER_FROM" in
    *.gz) gunzip -c "$RANKER_FROM" > /tmp/kerntailor-train/store.sqlite ;;
    *) cp "$RANKER_FROM" /tmp/kerntailor-train/store.sqlite ;;
  esac
  KERNTAILOR_HOME=/tmp/kerntailor-train python3 -m kerntailor costmodel --target "$TARGET" --save --json \
    > "$OUTDIR/costmodel.json" 2>> "$OUTDIR/env.txt" \
    && cp /tmp/kerntailor-train/models/*.pkl "$KERNTAILOR_HOME/models/" \
    && echo "ranker: learned model trained on $RANKER_FROM" >> "$OUTDIR/env.txt"
fi

both ""
[ "${AGAIN:-1}" = 1 ] && both "_again"   # AGAIN=0: no second pass
for d in $DTYPES; do
  for s in "" _again; do
    [ -f "$WORK/$d$s/bench.json" ] && python3 - "$WORK/$d$s/bench.json" "$WORK/cmd_$d$s.txt" "$OUTDIR/bench_$d$s.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
data["command"] = open(sys.argv[2]).read().strip()
json.dump(data, open(sys.argv[3], "w"), indent=1, default=str)
PY
  done
done
python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))" \
  "$KERNTAILOR_HOME/store.sqlite" "$OUTDIR/store.sqlite"   # a consistent copy, WAL included
tar czf "$OUTDIR/kernels.tgz" -C "$WORK" --exclude='*.pyc' . 2>/dev/null
cat "$OUTDIR/env.txt"
