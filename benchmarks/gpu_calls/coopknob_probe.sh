#!/usr/bin/env bash
# Issue #18 (helper coopknob): the generated cooperative softmax, 4096 x 393,216, at each value of the knobs the search
# now times (REUSE 0/1 x maxnreg 0/40/32), fp32 and bf16, beside the copy floor: benchmarks/coop_probe.py --no-probe
# (16 lines, predicted ~45 s; cut at 85 s by --max-wall). Results under $OUT: coop_knobs.{json,log}, coop_env.txt.
export PYTHONPATH=src PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', sys.version.split()[0])"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo "${KT_COMMIT:-unknown}") $(date -u +%FT%TZ)"; } > "$OUT/coop_env.txt"
timeout 100 python3 benchmarks/coop_probe.py --no-probe --max-wall 85 --out "$OUT/coop_knobs.json" 2>&1 | tee "$OUT/coop_knobs.log"
