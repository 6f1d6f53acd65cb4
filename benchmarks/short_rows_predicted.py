"""The analytical model's prediction beside each row of a `strided_probe.py --rows short` measurement: the same
(XBLOCK, RBLOCK, num_warps) tile as a reduction candidate over (X rows, R) on the target, no ISA facts (estimated
registers), with the bytes-in-flight term off (MEMORY_LATENCY_S 0) and at the committed constant. CPU only, seconds.

    PYTHONPATH=src python3 benchmarks/short_rows_predicted.py \\
        benchmarks/data/h100_2026-12-05d/short_rows_probe_fp32.json --target h100 \\
        --out benchmarks/data/h100_2026-12-05d/short_rows_predicted_vs_measured.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    from kerntailor.costmodel import AnalyticalModel, Candidate, Work, analytical
    from kerntailor.search import Config
    from kerntailor.targets import get_target

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe", type=Path, help="strided_probe.json of a --rows short run")
    ap.add_argument("--target", default="h100")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    target, kept = get_target(args.target), analytical.MEMORY_LATENCY_S[get_target(args.target).vendor]
    doc = json.loads(args.probe.read_text())
    rows = []
    for r in doc["results"]:
        if "knobs" not in r or "time_us" not in r:
            continue
        X, R = r["shape"]
        knobs = dict(kv.split(" ") for kv in r["knobs"].split("; "))
        cfg = Config("reduction", dict(XBLOCK=int(knobs["XBLOCK"]), RBLOCK=int(knobs["RBLOCK"]),
                                       num_warps=int(knobs["num_warps"]), num_stages=1, persistent=True))
        row = {"op": r["op"], "shape": f"{X}x{R}", "schedule": r["schedule"], "measured_us": r["time_us"]}
        for name, latency in (("pred_us_term_off", 0.0), (f"pred_us_latency_{kept * 1e6:g}us", kept)):
            saved = dict(analytical.MEMORY_LATENCY_S)
            analytical.MEMORY_LATENCY_S[target.vendor] = latency
            try:
                p = AnalyticalModel(target).explain(Candidate(cfg, Work.reduction(R=R, X=X, outputs_per_row=1), None))
            finally:
                analytical.MEMORY_LATENCY_S.update(saved)
            row[name] = round(p.seconds * 1e6, 1)
        rows.append(row)
        print(json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps({
            "label": f"{doc['label']}; beside the analytical model's prediction for {args.target} (estimated "
                     "registers), bytes-in-flight term off and on, computed on the CPU",
            "command": f"PYTHONPATH=src python3 benchmarks/short_rows_predicted.py {args.probe} --target "
                       f"{args.target} --out {args.out}",
            "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
