"""One line per bench row (problem, status, generated or library, us: ours, eager, compile, floor; speedups).

Usage: python3 benchmarks/gpu_calls/rows_summary.py ROWS.jsonl
"""

import json
import sys


def line(r: dict) -> str:
    t, fl, c, e = (r.get(k) for k in ("time_us", "floor_us", "compile_us", "eager_us"))
    vs = f"{e / t:.2f}x_eager {c / t:.2f}x_compile" if t and c and e else ""
    kind = "lib" if r.get("library_emitted") else "gen"
    why = (r.get("message") or r.get("reason") or "")[:200]
    return " ".join(str(x) for x in (r.get("problem"), r.get("status"), r.get("mode"), kind, t, e, c, fl, vs,
                                     r.get("seconds"), why))


if __name__ == "__main__":
    for text in open(sys.argv[1]):
        print(line(json.loads(text)))
