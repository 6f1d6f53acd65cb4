"""Issue #19's plain-convolution lines over a set of `kerntailor bench` rows: eager (cuDNN) / emitted and eager /
generated conv per problem, and their geometric means by kind (standard, transposed, depthwise), from the rows of
several bench passes (bench.rows.jsonl; a problem in two sources takes the later one).

    python benchmarks/conv_set.py ROWS.jsonl [ROWS.jsonl ...] [--md OUT.md]

"generated conv" is the generated module's time: the one emitted, or for a library row the one that lost (the
row's message: "the generated kernel (X us)"). Where a row lacks eager's time (bench before 45d779c), the better
baseline the message names stands in for eager and for the emitted time: the ratio is then a lower bound, ">=".
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

_GENERATED = re.compile(r"the generated kernel \(([\d.]+) us\)")
_BASELINE = re.compile(r"slower than the library \(([\d.]+) us")


def kind(problem: str) -> str:
    name = problem.lower()
    if "depthwise" in name and "separable" not in name:
        return "depthwise"
    return "transposed" if "transpose" in name else "standard"


def ratios(row: dict) -> dict | None:
    """One row's figures, or None where the row has no time (an error, a refusal)."""
    message = row.get("message") or ""
    baseline = float(m.group(1)) if (m := _BASELINE.search(message)) else None
    emitted = row.get("time_us") or baseline   # an untimed library row (before 45d779c) runs that baseline
    generated = emitted if not row.get("library_emitted") else (
        float(m.group(1)) if (m := _GENERATED.search(message)) else None)
    eager, bound = row.get("eager_us"), False
    if eager is None and baseline is not None:
        eager, bound = baseline, True
    if not (emitted and eager):
        return None
    return {"problem": row["problem"], "kind": kind(row["problem"]),
            "emitted": "library" if row.get("library_emitted") else "generated", "generated_us": generated,
            "emitted_us": emitted, "eager_us": eager, "compile_us": row.get("compile_us"),
            "floor_us": row.get("floor_us"), "bound": bound, "eager_over_emitted": eager / emitted,
            "eager_over_generated": eager / generated if generated else None}


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summary(rows: list[dict]) -> dict:
    out = {}
    for name in ("all", "standard", "transposed", "depthwise"):
        chosen = [r for r in rows if name == "all" or r["kind"] == name]
        out[name] = {"rows": len(chosen),
                     "eager_over_emitted": geomean([r["eager_over_emitted"] for r in chosen]),
                     "eager_over_generated": geomean([r["eager_over_generated"] for r in chosen
                                                      if r["eager_over_generated"]])}
    return out


def load(paths: list[str]) -> list[dict]:
    merged: dict[str, dict] = {}
    for path in paths:
        for text in Path(path).read_text().splitlines():
            if text.strip():
                row = json.loads(text)
                merged[row["problem"]] = row | {"source": path}
    return [r for r in (ratios(row) | {"source": row["source"]} if ratios(row) else None
                        for _, row in sorted(merged.items(), key=lambda kv: int(kv[0].split("_")[0])))
            if r is not None]


def markdown(rows: list[dict], sums: dict) -> str:
    def f(v, d=0):
        return "-" if v is None else f"{v:.{d}f}"
    lines = ["| problem | kind | emitted | generated conv | emitted time | eager | compile | floor | eager / emitted | "
             "eager / generated | source |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ge = ">=" if r["bound"] else ""
        lines.append(f"| {r['problem'][:40]} | {r['kind']} | {r['emitted']} | {f(r['generated_us'])} | "
                     f"{f(r['emitted_us'])} | {'(' + f(r['eager_us']) + ')' if r['bound'] else f(r['eager_us'])} | "
                     f"{f(r['compile_us'])} | {f(r['floor_us'])} | {ge}{f(r['eager_over_emitted'], 2)} | "
                     f"{ge}{f(r['eager_over_generated'], 2)} | {r['source']} |")
    lines.append("")
    for name, s in sums.items():
        lines.append(f"- {name}: {s['rows']} rows, geomean eager / emitted {f(s['eager_over_emitted'], 2)}, "
                     f"eager / generated {f(s['eager_over_generated'], 2)}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--md")
    args = ap.parse_args()
    rows = load(args.rows)
    text = markdown(rows, summary(rows))
    if args.md:
        Path(args.md).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
