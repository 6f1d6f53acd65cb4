"""Emit kernel.py files of the Llama decode step (b1, b32) at packed and unpacked schedules for host_overhead.py,
into benchmarks/work/pack/ (carried to the device by session_2026-12-05f_call1.sh).

    PYTHONPATH=src python3 benchmarks/gpu_calls/pack_emit.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "work" / "pack"
RUNS = {"b1": ("sdpa_gqa_decode_b1.py", ["16x64/4w/2s/split16", "16x64/4w/2s/split32/pack", "16x64/4w/2s/split16/pack",
                                         "16x64/4w/2s/split64/pack", "16x64/4w/2s/pack"]),
        "b32": ("sdpa_gqa_decode_b32.py", ["16x128/4w/3s", "16x64/4w/2s", "16x64/4w/2s/pack", "16x128/4w/3s/pack",
                                           "16x64/4w/3s/pack", "16x32/2w/3s/pack", "16x64/4w/2s/split2/pack"])}


def main() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import attn_probe
    from kerntailor.codegen import default_schedule, generate_module

    parse = attn_probe._script("attention").parse_config
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (file, labels) in RUNS.items():
        spec, gen, plan = attn_probe.planned(attn_probe.DATA / file, "bf16")
        for label in labels:
            schedules = {g.name: default_schedule(gen, g).retune(parse(label)) for g in plan.groups}
            module = generate_module(spec, gen, plan, schedules, "h100", "sm_90")
            path = OUT / f"{name}_{label.replace('/', '_')}.py"
            path.write_text(module.source)
            print(path.name)


if __name__ == "__main__":
    main()
