#!/usr/bin/env bash
# Device call (2026-12-02): the referee's special-values draw (#17 item 3) over problems/ and KernelBench level 1
# under the Triton interpreter, on the GPU machine's CPU cores (no GPU used: the same CPU judging as
# benchmarks/ieee_sweep.py's earlier data, 15 problems at once). The image's numpy 2.5 breaks Triton 3.6's
# interpreter, so numpy 2.3.5 travels as a wheel (.whl, git-ignored); .kbl1 is ../shared/kernelbench/level1
# copied unchanged (git-ignored).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1 KERNTAILOR_HOME=/tmp/kt-home
python3 benchmarks/ieee_sweep.py problems/level1 problems/level2 problems/level3 .kbl1 --jobs ${JOBS:-15} \
  --limit ${LIMIT:-150} --machine "GPU machine's CPU (16 cores; GPU unused), Triton interpreter, ${JOBS:-15} jobs" \
  --out $OUT/ieee_special_draw > $OUT/sweep_log.txt 2>&1
echo "sweep rc=$?"; head -5 $OUT/ieee_special_draw.md | tail -1
grep -v '"status": "pass"' $OUT/sweep_log.txt | cut -c1-300
