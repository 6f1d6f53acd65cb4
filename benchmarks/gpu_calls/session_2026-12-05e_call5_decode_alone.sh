#!/usr/bin/env bash
# GPU call 5 of the fifth session of 2026-12-05: was call 1's decode sweep (eager 101 us, compile 226 us at batch 1)
# inflated by the probe's own order (eager's profiler run before the timing), by its torch.compile run, or by the
# machine? benchmarks/attn_probe.py alone on the H100, decode b1, the default schedule and 16x128/4w/2s:
# (1) attn_probe_old.py = benchmarks/attn_probe.py as committed (profiler before the timing; carried under
#     benchmarks/work/probe with ROOT pointed at the checkout), --no-compile;
# (2) the working tree's attn_probe.py of the call, the profiler run moved after the timing (a change not kept),
#     --no-compile; (3) the same with torch.compile.
# All three: eager 19.5-19.6 us, compile 20.1 us. Neither order nor compile matters: call 1's probe ran beside eight
# generate runs and another probe on 16 cores, and host-bound calls (tens of us of Python a call) slow down when
# the host's cores are busy. Data: benchmarks/data/h100_2026-12-05e/attn_probe_decode_b1_alone_*_call5.json.
export PYTHONPATH=src PYTHONUNBUFFERED=1
S=16x128/4w/2s
timeout 100 python3 benchmarks/work/probe/attn_probe_old.py --only decode_b1 --schedules $S --no-compile --max-wall 90 --out $OUT/old_nocompile.json > $OUT/log1.txt 2>&1
timeout 100 python3 benchmarks/attn_probe.py --only decode_b1 --schedules $S --no-compile --max-wall 90 --out $OUT/new_nocompile.json > $OUT/log2.txt 2>&1
timeout 120 python3 benchmarks/attn_probe.py --only decode_b1 --schedules $S --max-wall 90 --out $OUT/new_compile.json > $OUT/log3.txt 2>&1
python3 - <<'PY'
import json, os
for n in ("old_nocompile", "new_nocompile", "new_compile"):
    try:
        d = json.load(open(os.environ["OUT"] + f"/{n}.json"))
        for r in d["rows"]:
            print(n, r.get("schedule"), "us", r.get("us"), "eager", r.get("eager_us"), "compile", r.get("compile_us"), r.get("eager_backend"), r.get("error"))
    except Exception as e:
        print(n, "ERR", e)
PY
tail -3 $OUT/log*.txt
