#!/usr/bin/env bash
# GPU call 2 of the second session of 2026-12-04 (#19): call 1's bench on the 13 level-2 conv+reducing-tail files
# call 1's 420-s cut did not reach (benchmarks/work/kbl2tail_rest/level2: the 21 of call 1's set less the 8 with a row
# in benchmarks/data/h200_2026-12-04b/call1), `--jobs 4`, no coop probe.
# Run from the repository root with carry ["benchmarks/work/kbl2tail_rest"]; results in $OUT/results.tgz.
L2_SUITE=benchmarks/work/kbl2tail_rest COOP=0 JOBS=${JOBS:-4} bash "$(dirname "$0")/session_2026-12-04b_call1.sh"
