"""`kerntailor generate` over a set of problem files on the CPU (predicted mode; the Triton interpreter is the
referee), one child process per file and dtype, each under its own time limit, and a Markdown table of what came
out: the plan's groups (family and nodes), which groups were generated and which called the library, the referee's
verdict, the wall time, and the one-line reason for anything refused.

    PYTHONPATH=src python benchmarks/convt_survey.py FILE... --dtype bf16 --out DIR [--jobs 2] [--limit 300]

Per file it writes DIR/NAME_DTYPE.{json,err} (generate's --json document and its stderr) and appends one row to
DIR/rows_DTYPE.jsonl; `--table` renders the rows already there without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _command(path: Path, dtype: str, out: Path, budget: float, candidates: int) -> list[str]:
    return [sys.executable, "-m", "kerntailor", "generate", str(path), "--target", "mi300x", "--dtype", dtype,
            "--budget", str(budget), "--candidates", str(candidates), "--out", str(out), "--force", "--json"]


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _groups(report: dict) -> str:
    parts = []
    for kernel in report.get("kernels", []):
        nodes = "+".join(kernel.get("nodes", []))
        parts.append(f"{kernel.get('family')}[{nodes}]")
    return " ; ".join(parts)


def run_one(path: Path, dtype: str, out: Path, limit: int, budget: float, candidates: int) -> dict:
    name = path.stem
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), KERNTAILOR_HOME=str(out / "home" / f"{name}_{dtype}"))
    started = time.monotonic()
    with open(out / f"{name}_{dtype}.json", "w") as stdout, open(out / f"{name}_{dtype}.err", "w") as stderr:
        proc = subprocess.run(["timeout", str(limit)] + _command(path, dtype, out / f"{name}_{dtype}", budget,
                                                                  candidates),
                              stdout=stdout, stderr=stderr, cwd=ROOT, env=env)
    row = {"file": path.name, "dtype": dtype, "rc": proc.returncode, "seconds": round(time.monotonic() - started, 1)}
    err = (out / f"{name}_{dtype}.err").read_text()
    try:
        doc = json.loads((out / f"{name}_{dtype}.json").read_text())
    except (json.JSONDecodeError, OSError):
        doc = {}
    report = doc.get("report", {}) or {}
    row["status"] = doc.get("status", "timeout" if proc.returncode == 124 else "crash")
    row["message"] = doc.get("message", "") or _last_line(err)
    row["groups"] = _groups(report)
    row["traceback"] = "Traceback" in err
    return row


def render(rows: list[dict]) -> str:
    lines = ["| file | dtype | status | s | groups (family[nodes]) | message |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (int(r["file"].split("_")[0]), r["dtype"])):
        msg = r["message"].replace("|", "/")
        lines.append(f"| {r['file'][:-3]} | {r['dtype']} | {r['status']} | {r['seconds']} | {r['groups']} | {msg} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--budget", type=float, default=20)
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--table", action="store_true", help="render DIR/rows_*.jsonl and exit")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table:
        rows_path = args.out / f"rows_{args.dtype}.jsonl"
        with ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_one, f, args.dtype, args.out, args.limit, args.budget, args.candidates)
                       for f in args.files]
            for fut in as_completed(futures):
                row = fut.result()
                with open(rows_path, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    rows = [json.loads(ln) for p in sorted(args.out.glob("rows_*.jsonl")) for ln in p.read_text().splitlines() if ln]
    print(render(rows))


if __name__ == "__main__":
    main()
