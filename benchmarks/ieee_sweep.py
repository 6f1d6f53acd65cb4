"""The referee's special-values draw (NaN, ±Inf, ±0, huge, tiny: verify/draws.py) over a suite, on the CPU.

    python benchmarks/ieee_sweep.py problems/ ../shared/kernelbench/level1/19_ReLU.py ... \
        --out benchmarks/data/ieee_special_draw_cpu_DATE [--limit 240] [--jobs N]

Per problem file, in a child process killed at --limit seconds: capture, plan and each group's default schedule
as `generate` takes them (a group codegen refuses is planned as a library call, as generate does), kernel.py
for mi300x, then the full referee (verify_candidate, the generated module's library calls allowed as generate
allows them) under the Triton interpreter on the problem's smallest variant only: its 3 regular draws, then the
special draw. No search: the default schedules are the kernels judged. Status per file:

- pass: every check, the special draw included;
- mismatch: the referee failed the special draw (its check and one-line reason name the mismatch);
- fail: the referee failed before the special draw (a regular draw: not this sweep's finding, listed as is);
- library: nothing generated (not captured, or codegen covers no group): the special draw has nothing to judge;
- timeout / error: the child ran past --limit or raised.

Writes OUT.json (rows, command, machine, toolchain, date) and OUT.md (a table).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def judge_one(path: str) -> dict:
    """Runs in the child: generate (default schedules) and judge one problem file."""
    from kerntailor.errors import KerntailorError
    from kerntailor.generate.library_ops import dispatched_ops
    from kerntailor.generate.pipeline import GenerateSettings, _capture, _plan_around_refusals
    from kerntailor.generate.run import Run
    from kerntailor.problem import load_problem
    from kerntailor.targets import get_target
    from kerntailor.verify import VerifySettings, verify_candidate
    from kerntailor.verify.referee import _largest_numel

    started = time.monotonic()
    problem = load_problem(path)
    run = Run(GenerateSettings(), get_target("mi300x"), problem, None, Path("."), lambda *a: None)
    try:
        _capture(run)
        schedules = _plan_around_refusals(run)
    except KerntailorError as e:
        return {"status": "library", "reason": f"not generated: {e}"[:300]}
    if run.library_groups and len(run.library_groups) == len(run.plan.groups):
        return {"status": "library", "reason": "every group is a library call"}
    ops: set[str] = set(dispatched_ops(run.gen, run.plan, "cpu")) if run.library_groups else set()
    module = run.module(schedules)
    calls = {c for k in module.kernels for c in k.library_calls}
    if any(s.library_product for s in schedules.values()):
        from kerntailor.generate.pipeline import LIBRARY_PRODUCT_CALLS, LIBRARY_PRODUCT_OPS
        ops |= LIBRARY_PRODUCT_OPS
        calls |= LIBRARY_PRODUCT_CALLS
    variant = min((v.name for v in problem.variants), key=lambda n: _largest_numel(problem, n))
    with tempfile.TemporaryDirectory() as tmp:
        kernel = Path(tmp) / "kernel.py"
        kernel.write_text(module.source)
        v = verify_candidate(problem, kernel, VerifySettings(device="cpu", variants=(variant,),
                                                             allowed_ops=frozenset(ops),
                                                             allowed_calls=frozenset(calls)))
    special = [c for c in v.cases if c.draw == "special"]
    if v.passed:
        status = "pass" if special else "fail"
    else:
        status = "mismatch" if v.draw == "special" else "fail"
    return {"status": status, "variant": variant, "check": v.check, "draw": v.draw,
            "reason": v.reason[:400], "families": sorted({g.family for g in run.plan.groups}),
            "special_rel_norm": special[0].rel_norm if special else None,
            "seconds": round(time.monotonic() - started, 1)}


def problem_files(args: list[str]) -> list[Path]:
    files: list[Path] = []
    for a in args:
        p = Path(a)
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--out")
    parser.add_argument("--limit", type=float, default=240.0)
    parser.add_argument("--jobs", type=int, default=1, help="problems judged at once (one child process each)")
    parser.add_argument("--machine", default=None, help="the machine's description in the data file")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        try:
            row = judge_one(args.one)
        except Exception as e:  # noqa: BLE001 - one row, whatever the child met
            row = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:400]}
        print("ROW " + json.dumps(row))
        return
    paths = problem_files(args.paths)
    src = str(ROOT / "src")
    env = dict(os.environ, TRITON_INTERPRET="1",
               PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p))
    if args.jobs > 1:   # one core a child
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

    def one(path: Path) -> dict:
        started = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True,
                                  env=env, timeout=args.limit)
            line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("ROW ")), None)
            row = json.loads(line[4:]) if line else {"status": "error", "reason": proc.stderr.strip()[-300:]}
        except subprocess.TimeoutExpired:
            row = {"status": "timeout", "reason": f"over {args.limit:g} s"}
        return {"problem": str(path), **row, "wall_s": round(time.monotonic() - started, 1)}

    done: dict[Path, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for row in pool.map(one, paths):   # in the paths' order, as each finishes
            print(json.dumps(row), flush=True)
            done[Path(row["problem"])] = row
            if args.out:
                write(args, [done[p] for p in paths if p in done])


def write(args, rows: list[dict]) -> None:
    import torch
    import triton

    doc = {"command": "python benchmarks/ieee_sweep.py " + " ".join(sys.argv[1:]),
           "date": datetime.date.today().isoformat(),
           "machine": args.machine or f"CPU ({platform.machine()}, {os.cpu_count()} cores), Triton interpreter, "
           f"{args.jobs} job(s)", "torch": torch.__version__, "triton": triton.__version__,
           "numpy": __import__("numpy").__version__, "rows": rows}
    Path(args.out + ".json").write_text(json.dumps(doc, indent=1) + "\n")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines = [f"# The special-values draw over {len(rows)} problems ({doc['date']}, {doc['machine']})", "",
             f"`{doc['command']}`", "", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())), "",
             "| problem | status | variant | check | reason |", "|---|---|---|---|---|"]
    for r in rows:
        reason = (r.get("reason") or "").replace("|", "\\|")
        lines.append(f"| {r['problem']} | {r['status']} | {r.get('variant') or ''} | {r.get('check') or ''} | "
                     f"{reason[:220]} |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
