#!/usr/bin/env bash
# GPU call 1 of the third session of 2026-12-04, two parts, each writing under $OUT as it ends:
# (1, #19) gpu_calls/libconv_copy_remeasure.sh: level-2 17, 31, 35, 46 (64 -> 128 3x3 at 128^2, batch 128) in bf16
#     after 8984625 (the library conv's channels-last input copied by a tiled Triton kernel), + libtail_profile on 31;
# (2, #19) benchmarks/conv_gen_probe.py on 31, bf16, with torch.compile: the generated implicit GEMM's schedules on
#     that shape (the seeds, EXTRA_TILES and the tiles below through CONV_PROBE_TILES: 256-row tiles, 2-4 stages,
#     4/8 warps) beside cuDNN (library, library_cl) and torch.compile, to see whether a tile closes the gap to cuDNN
#     (our conv ~280 TFLOP/s vs cuDNN's 665, 2026-12-04b call 3) or the kernel's design must change.
# Run from the repository root with carry ["benchmarks/work/kbl2lose"] (prepare as libconv_copy_remeasure.sh says).
export PYTHONPATH=src PYTHONUNBUFFERED=1
O=$OUT; T0=$(date +%s)
mkdir -p $O/lose $O/probe
OUT=$O/lose BENCH_LIMIT=${BENCH_LIMIT:-280} bash benchmarks/gpu_calls/libconv_copy_remeasure.sh > $O/lose/call.log 2>&1
echo "lose rc=$? $(( $(date +%s) - T0 )) s" | tee -a $O/times.txt; tail -30 $O/lose/call.log | cut -c1-220
export CONV_PROBE_TILES='[{"BLOCK_M":256,"BLOCK_N":128,"BLOCK_K":64,"num_warps":8,"num_stages":3},
 {"BLOCK_M":256,"BLOCK_N":128,"BLOCK_K":64,"num_warps":8,"num_stages":2},
 {"BLOCK_M":256,"BLOCK_N":128,"BLOCK_K":32,"num_warps":8,"num_stages":4},
 {"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,"num_warps":8,"num_stages":4},
 {"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,"num_warps":8,"num_stages":2},
 {"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,"num_warps":4,"num_stages":3},
 {"BLOCK_M":64,"BLOCK_N":128,"BLOCK_K":64,"num_warps":4,"num_stages":4}]'
timeout ${PROBE_LIMIT:-200} python3 benchmarks/conv_gen_probe.py benchmarks/work/kbl2lose/level2/31_Conv2d_Min_Add_Multiply.py \
  --dtype bf16 --out $O/probe/conv_gen_31.json > $O/probe/conv_gen_31.log 2>&1
echo "probe rc=$? $(( $(date +%s) - T0 )) s" | tee -a $O/times.txt
rm -rf $O/probe/conv_gen_31_modules
python3 - $O/probe/conv_gen_31.json <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except Exception as e:
    print("no probe json:", e); raise SystemExit
for r in data.get("rows", []):
    t = r.get("times_us", {})
    for k in sorted(t, key=t.get):
        print(f"{k:34s} {t[k]:9.1f} us  rel_err {r.get('rel_err_' + k, '-')}")
    print({k: v for k, v in r.items() if k not in ("times_us", "quartiles_us") and not k.startswith("rel_err")})
PY
