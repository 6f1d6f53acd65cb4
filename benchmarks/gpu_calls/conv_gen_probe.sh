#!/usr/bin/env bash
# The generated convolution (codegen/conv.py, #19 items 1-3) against the library's (cuDNN: NCHW, and channels-last
# where the tail can keep it) and torch.compile on the H200: benchmarks/conv_gen_probe.py over KernelBench level1
# 50/55/63/67/87 (plain convolutions: 2-d square/asymmetric inputs, 1-d, 1x1), 82 (depthwise) and level2 71/4/54 (conv + pointwise
# tails), per dtype in DTYPES (default "fp32 bf16"), each dtype's pass stopped from starting files after
# DEADLINE_S. JSON per dtype under $OUT (conv_gen_<dtype>.json, times in us, labelled measured), the log beside it.
#   run from the repository root, KernelBench at benchmarks/work/kb:
#   OUT=$OUT DTYPES=bf16 bash benchmarks/gpu_calls/conv_gen_probe.sh   # one dtype per 10-minute call (9 files,
#   OUT=$OUT DTYPES=fp32 bash benchmarks/gpu_calls/conv_gen_probe.sh   # ~40-60 s each: 5 Triton modules + compile)
export PYTHONPATH=src PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/conv_gen}; mkdir -p "$OUT"
KB=${KB:-benchmarks/work/kb}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit ${KT_COMMIT:-unknown} $(date -u +%FT%TZ)"; } > "$OUT/env.txt"
FILES=$(ls $KB/level1/{50,55,63,67,87,82}_*.py $KB/level2/{71,4,54}_Conv2d_*.py)
T0=$(date +%s)
for dtype in ${DTYPES:-fp32 bf16}; do
  flag=$([ "$dtype" = fp32 ] && echo "" || echo "--dtype $dtype")
  timeout ${LIMIT:-570} python3 benchmarks/conv_gen_probe.py $FILES $flag --deadline-s ${DEADLINE_S:-450} \
    --out "$OUT/conv_gen_$dtype.json" > "$OUT/conv_gen_$dtype.log" 2>&1
  echo "$dtype rc=$? $(( $(date +%s) - T0 )) s" >> "$OUT/env.txt"
  rm -rf "$OUT/conv_gen_${dtype}_modules"   # the generated sources are re-made from the commit
done
cat "$OUT/env.txt"
python3 - "$OUT" <<'PY'
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("conv_gen_*.json")):
    for r in json.loads(f.read_text())["rows"]:
        t = r.get("times_us", {})
        lib = min((v for k, v in t.items() if k.startswith("library")), default=None)
        best = r.get("best_generated")
        print(f"{f.stem:14} {r['problem'][:40]:40} gen {best} {t.get(best, float('nan')):.1f} | lib {lib} | "
              f"compile {t.get('torch.compile')} | lib/gen {r.get('library_over_generated')} "
              f"{r.get('error', '') or r.get('skipped', '') or r.get('run_errors', '')}")
PY
