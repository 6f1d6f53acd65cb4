#!/usr/bin/env bash
# GPU call for branch l2convt (#19, the level-2 transposed-convolution set): `kerntailor bench --part all` over a
# folder of ../shared/kernelbench level-2 files copied unchanged, in DTYPE (bf16 or fp32), `--jobs 4 --candidates 2
# --budget 20`, cut at BENCH_LIMIT s (default 540), then rows_summary.py.
#   call 1: L2_SUITE=benchmarks/work/l2convt_tails DTYPE=bf16  (36 42 44 49 58 91: the reductions now fused into the
#           transposed conv's kernel: a row tail over <= 128 channels (36 49 58 91, stride 2) in the phase form with
#           one tile over the channels, 42's column tail (stride 1) and 44's (stride 2: the gather form, which
#           multiplies the taps the stride leaves empty) in the gather form; compare with main's rows for the same
#           files (conv kernel + reduction kernel) and with eager / torch.compile)
#   call 2: the same with DTYPE=fp32
#   call 3: L2_SUITE=benchmarks/work/l2convt DTYPE=bf16 BENCH_LIMIT=580  (all 30 ConvTranspose files; a cut run keeps
#           its rows)
# Run from the repository root with carry ["benchmarks/work/l2convt_tails", "benchmarks/work/l2convt"]; results in
# $OUT/results.tgz and $OUT/summary.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
D=${DTYPE:-bf16}; R=/tmp/results; rm -rf $R /tmp/kt-home-l2t /tmp/kb-l2t; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ) nproc $(nproc) suite ${L2_SUITE:?set L2_SUITE} dtype $D"; } > $R/env.txt
KERNTAILOR_HOME=/tmp/kt-home-l2t SUITE=$L2_SUITE PART=all DTYPES=$D PRECISION=ieee AGAIN=0 \
  JOBS=${JOBS:-4} CANDIDATES=${CANDIDATES:-2} BUDGET=${BUDGET:-20} TIMEOUT=${BENCH_LIMIT:-540} \
  WORK=/tmp/kb-l2t bash benchmarks/bench_suite.sh $R/bench_$D > $R/suite_$D.log 2>&1
cp /tmp/kb-l2t/$D/bench.rows.jsonl $R/rows_$D.jsonl 2>/dev/null; cp /tmp/kb-l2t/log_$D.txt $R/ 2>/dev/null
rm -f $R/bench_$D/kernels.tgz; (cd /tmp/kb-l2t && tar czf $R/kernels_$D.tgz --exclude='*.sqlite' --exclude='*.pyc' . 2>/dev/null)
python3 benchmarks/gpu_calls/rows_summary.py $R/rows_$D.jsonl > $R/summary.txt 2>&1
cp $R/summary.txt $OUT/summary.txt; tar czf $OUT/results.tgz -C /tmp results
cat $R/env.txt $R/summary.txt
rm -rf /tmp/kt-home-l2t /tmp/kb-l2t
