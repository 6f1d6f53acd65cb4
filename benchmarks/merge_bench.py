"""One bench result from the rows of several `kerntailor bench` passes (bench.rows.jsonl files): a pass that
stopped early keeps its finished rows, and a later pass over the missing problems completes it.

    python benchmarks/merge_bench.py --out F.json --md F.md --target h200 --dtype bf16 --part memory-bound \
        --source ROWS.jsonl COMMIT "COMMAND" [--source ...] [--again ROWS.jsonl COMMIT "COMMAND"] --machine "..."

Each row keeps the commit and command of the pass that produced it; a problem present in two sources takes
the later one. The summary is `kerntailor.generate.bench.summarize` over the merged rows, per level and
overall, as `kerntailor bench` writes it; the Markdown is `render_bench`'s.
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path


def main() -> None:
    from kerntailor.generate.bench import render_bench, summarize

    ap = argparse.ArgumentParser()
    ap.add_argument("--source", nargs=3, action="append", required=True, metavar=("ROWS", "COMMIT", "COMMAND"))
    ap.add_argument("--again", nargs=3, action="append", default=[], metavar=("ROWS", "COMMIT", "COMMAND"),
                    help="a second pass on the same store: how many rows it served from the store")
    ap.add_argument("--out", required=True)
    ap.add_argument("--md")
    ap.add_argument("--target", required=True)
    ap.add_argument("--dtype", required=True)
    ap.add_argument("--part", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--note", default="")
    ap.add_argument("--suite", default="problems", help="what the rows ran over (a KernelBench sample: its rule)")
    ap.add_argument("--suite-dir", type=Path, default=None,
                    help="the suite's folder here: its problems without a row are listed as not reached")
    args = ap.parse_args()
    rows: dict[str, dict] = {}
    for path, commit, command in args.source:
        for line in Path(path).read_text().splitlines():
            row = json.loads(line) | {"commit": commit, "command": command}
            rows[row["problem"]] = row
    ordered = sorted(rows.values(), key=lambda r: (r["level"], r["problem"]))
    not_reached = sorted(f"{p.parent.name}/{p.stem}" for p in (args.suite_dir.glob("*/*.py") if args.suite_dir else [])
                         if p.stem not in rows and p.parent.name != "models")   # whole models: bench skips them
    levels = sorted({r["level"] for r in ordered})
    again = []
    for path, commit, command in args.again:
        served = [json.loads(line) for line in Path(path).read_text().splitlines()]
        again.append({"commit": commit, "command": command, "rows": len(served),
                      "served_from_store": sum(bool(r.get("served_from_store")) for r in served),
                      "regenerated": sorted(r["problem"] for r in served if not r.get("served_from_store")),
                      "seconds": round(sum(r.get("seconds", 0) for r in served), 1)})
    result = {
        "suite": args.suite, "part": args.part, "target": args.target, "dtype": args.dtype,
        "date": datetime.date.today().isoformat(), "machine": args.machine, "note": args.note,
        "sources": [{"rows": p, "commit": c, "command": cmd} for p, c, cmd in args.source], "again": again,
        "complete": not not_reached, "not_reached": not_reached, "rows": ordered,
        "summary": {"overall": summarize(ordered)} | {lv: summarize([r for r in ordered if r["level"] == lv])
                                                      for lv in levels},
    }
    Path(args.out).write_text(json.dumps(result, indent=1, default=str))
    if args.md:
        Path(args.md).write_text(render_bench(result))


if __name__ == "__main__":
    main()
