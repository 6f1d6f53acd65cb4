#!/usr/bin/env bash
# GPU call 2 of the session of 2026-12-04: (1) #21: call 1's decode optimize was cut at its 300 s limit before the
# end-to-end timing (seven groups took 29-55 s each): the same run with OPT_LIMIT=420; (2) #14: ledger_peaks.sh on
# two problems (49_Max_reduction bf16, 22_Tanh fp32: the two largest reservations last measured) if time is left.
# Run from the repository root with carry [".hf-bundle", "benchmarks/work/kb"]; everything back in $OUT/results.tgz.
export PYTHONPATH=src PYTHONUNBUFFERED=1
R=/tmp/results; rm -rf $R /tmp/kt-hf /tmp/hf_llama /tmp/kt-home; mkdir -p $R/hf
T0=$(date +%s)
pack() { echo "$1 rc=$2 $(( $(date +%s) - T0 )) s" >> $R/env.txt; tar czf $OUT/results.tgz -C /tmp results; }
OUT=$R/hf SHAPES=decode LEAN=0 TOP_DECODE=${TOP_DECODE:-8} BUDGET=${OPT_BUDGET:-20} CANDIDATES=${CANDIDATES:-1} \
  OPT_LIMIT=${OPT_LIMIT:-420} KT_COMMIT=${KT_COMMIT:-unknown} bash benchmarks/gpu_calls/hf_llama.sh > $R/hf_llama.txt 2>&1
pack hf $?
left=$(( ${CALL_LIMIT:-560} - ($(date +%s) - T0) - 15 ))
if [ $left -gt 60 ]; then
  KB=benchmarks/work/kb/level1 mkdir -p $R/ledger
  timeout $left python3 benchmarks/ledger_peaks.py --out $R/ledger \
    benchmarks/work/kb/level1/49_Max_reduction_over_a_dimension.py:bf16 benchmarks/work/kb/level1/22_Tanh.py:fp32 \
    > $R/ledger/table.md 2> $R/ledger/stderr.txt
  pack ledger $?
fi
tail -c 2500 $R/hf_llama.txt; cat $R/ledger/table.md 2>/dev/null; cat $R/env.txt
