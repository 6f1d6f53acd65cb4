"""Run `kerntailor verify --time` on a few problems with hand-written candidates, twice, and record it all.

    PYTHONPATH=src python3 benchmarks/verify_time.py --out benchmarks/data --tag h200

Writes verify_time_<tag>_<date>.json (every verdict as JSON, the exact commands, GPU, driver, torch and
triton versions, date, the spread between the two rounds) and the same as text (.txt). Runs one
verification at a time (timing needs the GPU to itself), both rounds of a problem back to back (the second
finds Triton's and Inductor's caches warm); stops starting new ones after --deadline-s.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

RUNS = [
    ("problems/level1/softmax_long_rows.py", "tests/candidates/ok_softmax.py", []),
    ("problems/level1/relu.py", "tests/candidates/ok_relu.py", []),
    ("problems/level1/layernorm.py", "tests/candidates/ok_layernorm.py", []),
    ("problems/level1/matmul_square.py", "tests/candidates/tf32_matmul.py", ["--tf32"]),
]


def _environment() -> dict:
    import torch
    import triton

    env = {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0],
           "date": datetime.datetime.now().isoformat(timespec="seconds"), "gpu": "none", "driver": ""}
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return env


def _spread(results: list[dict]) -> dict:
    """Per problem and timed function: the two rounds' medians and their relative difference."""
    by: dict[str, dict[int, dict]] = {}
    for r in results:
        t = (r.get("verdict") or {}).get("timing")
        if t:
            by.setdefault(r["problem"], {})[r["round"]] = {x["name"]: x["median_s"] for x in t["timings"]}
    out = {}
    for problem, rounds in by.items():
        if 1 in rounds and 2 in rounds:
            out[problem] = {name: {"round1_us": rounds[1][name] * 1e6, "round2_us": rounds[2][name] * 1e6,
                                   "rel_diff": abs(rounds[2][name] - rounds[1][name]) / rounds[1][name]}
                            for name in rounds[1] if name in rounds[2]}
    return out


def _text(doc: dict) -> str:
    from kerntailor.verify import render_verdict
    from kerntailor.verify.verdict import CaseResult, Verdict

    env = doc["environment"]
    lines = [f"kerntailor verify --time on {env['gpu']} (driver {env['driver']}), torch {env['torch']}, "
             f"triton {env['triton']}, {env['date']}", ""]
    for r in doc["runs"]:
        lines.append(f"$ {r['command']}    # round {r['round']}, exit {r['exit_code']}, {r['wall_s']:.1f} s")
        v = r.get("verdict")
        if v:
            fields = {**v, "cases": tuple(CaseResult(**c) for c in v["cases"]),
                      "where": tuple(v["where"]) if v.get("where") else None}
            lines.append(render_verdict(Verdict(**{k: (tuple(x) if isinstance(x, list) else x)
                                                   for k, x in fields.items()})))
        else:
            lines.append(f"  no verdict: {r.get('error', '')}")
        lines.append("")
    lines.append("spread between the two rounds (median µs; |r2 - r1| / r1):")
    for problem, names in doc["spread"].items():
        cells = ", ".join(f"{n} {d['round1_us']:.1f} / {d['round2_us']:.1f} ({100 * d['rel_diff']:.1f}%)"
                          for n, d in names.items())
        lines.append(f"  {problem}: {cells}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/data")
    ap.add_argument("--tag", default="h200")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--deadline-s", type=float, default=280.0)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--only", default="", help="run only the problems whose path contains this text")
    args = ap.parse_args()
    start = time.monotonic()
    env = _environment()
    results = []
    runs = [r for r in RUNS if args.only in r[0]]
    for problem, candidate, flags in runs:      # both rounds of a problem back to back: pairs complete first
        for rnd in range(1, args.rounds + 1):
            cmd = ["kerntailor", "verify", problem, candidate, "--time", "--json", *flags]
            if args.device != "auto":
                cmd += ["--device", args.device]
            entry = {"round": rnd, "problem": Path(problem).stem, "candidate": candidate,
                     "command": shlex.join(cmd)}
            if time.monotonic() - start > args.deadline_s:
                entry.update(exit_code=None, wall_s=0.0, error="skipped: past the deadline")
                results.append(entry)
                continue
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "kerntailor", *cmd[1:]], capture_output=True, text=True)
            entry.update(exit_code=proc.returncode, wall_s=time.monotonic() - t0)
            try:
                entry["verdict"] = json.loads(proc.stdout)
            except json.JSONDecodeError:
                entry["error"] = (proc.stderr or proc.stdout).strip()[-2000:]
            results.append(entry)
            print(f"round {rnd} {entry['problem']}: exit {proc.returncode} in {entry['wall_s']:.1f} s", flush=True)
    doc = {"invocation": "PYTHONPATH=src python3 " + shlex.join(sys.argv), "environment": env, "runs": results,
           "spread": _spread(results)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"verify_time_{args.tag}_{env['date'][:10]}" + (f"_{Path(args.only).stem}" if args.only else "")
    (out / f"{stem}.json").write_text(json.dumps(doc, indent=2, default=str))
    text = _text(doc)
    (out / f"{stem}.txt").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
