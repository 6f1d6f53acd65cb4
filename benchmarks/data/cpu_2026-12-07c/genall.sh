#!/bin/bash
# usage: genall.sh OUTDIR files...
OUT=$1; shift
mkdir -p $OUT
for f in "$@"; do n=$(basename $f .py); T0=$(date +%s)
  PYTHONPATH=/work/main/src KERNTAILOR_HOME=$OUT/home timeout 900 /work/main/.venv/bin/python -m kerntailor generate $f --target mi300x --candidates 1 --budget 1 --no-store --out $OUT/$n > $OUT/$n.log 2>&1
  echo "$n rc=$? $(( $(date +%s) - T0 ))s $(grep -v Warn $OUT/$n.log | grep -E '^(generated|library)' | tail -1)" >> $OUT/summary.txt
done
