"""The referee's time per problem, two source trees side by side (#15: the sandboxed referee may cost at most
20 % more than the one it replaced).

    git worktree add /tmp/kt-before 963675c          # the referee before the sandbox
    PYTHONPATH=src python3 benchmarks/verify_overhead.py --before /tmp/kt-before/src --after src \\
        --rounds 3 --out benchmarks/data/verify_overhead_<machine>_<date>.json [--device cpu] [--time]

Runs `kerntailor verify CANDIDATE` on each pair of RUNS with each tree, alternating which goes first round by
round (so drift and warm caches fall on both alike), one verification at a time; records the command's wall
time and the verdict's own wall_s, and prints the median of each per problem with the ratio after/before.
Pairs whose problem is too big for the interpreter run their small variants there (the referee's choice).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = [
    ("tests/candidates/problems/softmax_rows.py", "tests/candidates/ok_softmax.py", []),
    ("tests/candidates/problems/relu_small.py", "tests/candidates/ok_relu.py", []),
    ("tests/candidates/problems/layernorm_small.py", "tests/candidates/ok_layernorm.py", []),
    ("tests/candidates/problems/row_mean.py", "tests/candidates/ok_row_mean.py", []),
    ("tests/candidates/problems/linear_small.py", "tests/candidates/ok_linear_ieee.py", []),
    ("problems/level1/softmax_long_rows.py", "tests/candidates/ok_softmax.py", []),
    ("problems/level1/relu.py", "tests/candidates/ok_relu.py", []),
    ("problems/level1/layernorm.py", "tests/candidates/ok_layernorm.py", []),
    ("problems/level1/matmul_square.py", "tests/candidates/tf32_matmul.py", ["--tf32"]),
]


def _one(src: str, problem: str, candidate: str, flags: list[str], device: str, timed: bool) -> dict:
    cmd = [sys.executable, "-m", "kerntailor", "verify", problem, candidate, "--json", *flags]
    cmd += ["--device", device] if device != "auto" else []
    cmd += ["--time"] if timed else []
    env = dict(os.environ, PYTHONPATH=src)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    try:
        verdict = json.loads(proc.stdout)
    except json.JSONDecodeError:
        verdict = {}
    return {"exit": proc.returncode, "wall_s": wall, "verdict_wall_s": verdict.get("wall_s"),
            "passed": verdict.get("passed"), "error": (proc.stderr or "")[-300:] if not verdict else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the src folder of the tree to compare against")
    ap.add_argument("--after", default="src")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--time", action="store_true", help="pass --time (GPU)")
    ap.add_argument("--only", default="", help="only the pairs whose problem path contains this")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    trees = {"before": str(Path(args.before).resolve()), "after": str(Path(args.after).resolve())}
    runs = [r for r in RUNS if args.only in r[0]]
    rows = []
    for rnd in range(args.rounds):
        for problem, candidate, flags in runs:
            order = ["before", "after"] if rnd % 2 == 0 else ["after", "before"]
            for which in order:
                r = _one(trees[which], problem, candidate, flags, args.device, args.time)
                rows.append({"round": rnd + 1, "tree": which, "problem": problem, "candidate": candidate, **r})
                print(f"round {rnd + 1} {which:<6} {Path(problem).stem:<18} exit {r['exit']} "
                      f"{r['wall_s']:6.1f} s (verdict {r['verdict_wall_s'] or 0:6.1f} s)", flush=True)
    summary = []
    for problem, candidate, _ in runs:
        med = {}
        for which in ("before", "after"):
            mine = [r for r in rows if r["problem"] == problem and r["tree"] == which and r["exit"] in (0, 1)]
            med[which] = (statistics.median(r["wall_s"] for r in mine) if mine else None,
                          statistics.median(r["verdict_wall_s"] for r in mine if r["verdict_wall_s"] is not None)
                          if mine else None)
        ratio = med["after"][0] / med["before"][0] if med["before"][0] and med["after"][0] else None
        summary.append({"problem": problem, "candidate": candidate, "before_wall_s": med["before"][0],
                        "after_wall_s": med["after"][0], "before_verdict_s": med["before"][1],
                        "after_verdict_s": med["after"][1], "ratio_wall": ratio})
    print(f"\n{'problem':<22}{'before s':>10}{'after s':>10}{'after/before':>14}   (median command wall time)")
    for s in summary:
        ratio = f"{s['ratio_wall']:.2f}" if s["ratio_wall"] else "-"
        print(f"{Path(s['problem']).stem:<22}{s['before_wall_s'] or 0:>10.1f}{s['after_wall_s'] or 0:>10.1f}"
              f"{ratio:>14}")
    total = {w: sum(s[f"{w}_wall_s"] or 0 for s in summary) for w in ("before", "after")}
    print(f"{'all':<22}{total['before']:>10.1f}{total['after']:>10.1f}"
          f"{total['after'] / total['before'] if total['before'] else 0:>14.2f}")
    if args.out:
        doc = {"invocation": "python3 " + " ".join(sys.argv), "trees": trees, "host": platform.node(),
               "cpus": os.cpu_count(), "date": datetime.datetime.now().isoformat(timespec="seconds"),
               "rows": rows, "summary": summary, "total": total}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
