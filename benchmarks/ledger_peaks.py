"""The GPU memory ledger's figures against what the referee's two processes reserved and held (issue #14 item 5).

    PYTHONPATH=src python3 benchmarks/ledger_peaks.py [--out DIR] FILE:DTYPE ...

For each problem: `kerntailor verify --time` with the problem's own Model as the candidate (library calls allowed:
this measures the referee, not a kernel), alone on the GPU; the timing report's notes give the judge's and the
candidate process's peaks (reserved by the allocator, and allocated). Printed beside the ledger's count of the
tensors (measure.memory.job_need: `held`) and its reservation (`total`). One markdown row a problem; the raw
verdicts under --out. GPU only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

PEAK = re.compile(r"(judge|candidate) process GPU peak: ([\d.]+) GB reserved by its allocator, ([\d.]+) GB allocated")


def _notes(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _notes(v)]
    if isinstance(value, list):
        return [n for v in value for n in _notes(v)]
    return []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", nargs="+", help="FILE:DTYPE (fp32, bf16, fp16)")
    ap.add_argument("--out", default="/tmp/ledger_peaks")
    args = ap.parse_args()
    import torch

    from kerntailor.measure.memory import job_need
    from kerntailor.problem import load_problem

    if not torch.cuda.is_available():
        print("needs a GPU", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print("| problem | dtype | ledger: tensors GB | ledger: reservation GB | judge reserved / allocated GB | "
          "candidate reserved / allocated GB | sum reserved | reservation / sum reserved |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.problems:
        path, dtype = spec.rsplit(":", 1)
        name = Path(path).stem
        need = job_need(load_problem(path, dtype))
        cand = out / f"{name}_{dtype}_candidate.py"
        # the reference renamed: every `Model` (its class line and KernelBench's `super(Model, self)`) becomes ModelNew,
        # since the referee's static check refuses a candidate that names the reference Model
        cand.write_text(re.sub(r"\bModel\b", "ModelNew", Path(path).read_text()))
        r = subprocess.run([sys.executable, "-m", "kerntailor", "verify", path, str(cand), "--dtype", dtype,
                            "--allow-library", "--time", "--json"], capture_output=True, text=True)
        (out / f"{name}_{dtype}.json").write_text(r.stdout)
        (out / f"{name}_{dtype}.log").write_text(r.stderr)
        peaks = {}
        try:
            for note in _notes(json.loads(r.stdout)):
                m = PEAK.search(note)
                if m:
                    peaks[m.group(1)] = (float(m.group(2)), float(m.group(3)))
        except ValueError:
            pass
        if len(peaks) < 2:
            print(f"| {name} | {dtype} | {need.held / 1e9:.1f} | {need.gigabytes():.1f} | no peaks (rc {r.returncode}: "
                  f"{(r.stderr.strip().splitlines() or ['?'])[-1][:120]}) | | | |")
            continue
        (jr, ja), (cr, ca) = peaks["judge"], peaks["candidate"]
        print(f"| {name} | {dtype} | {need.held / 1e9:.1f} | {need.gigabytes():.1f} | {jr:.1f} / {ja:.1f} | "
              f"{cr:.1f} / {ca:.1f} | {jr + cr:.1f} | {need.gigabytes() / (jr + cr):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
