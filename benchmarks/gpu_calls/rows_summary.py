"""One line per bench row (problem, status, generated or library, us: ours, eager, compile, floor; speedups), then,
given the bench's progress journal (bench.progress.jsonl beside the rows), one line per problem that has no row:
where it was when the bench was cut (its last step and the seconds since it was queued).

Usage: python3 benchmarks/gpu_calls/rows_summary.py ROWS.jsonl [PROGRESS.jsonl]
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


def in_flight(rows: list[dict], steps: list[dict]) -> list[str]:
    """`problem: cut at <last step> (<done>/<total>): <detail>, <t> s after it was queued`: each journaled problem with
    no row (detail: the referee's case, in a cut judgement)."""
    last = {s["problem"]: s for s in steps}
    done = {r.get("problem") for r in rows}
    return [f"{p}: cut at {s['stage']}" + (f" ({s['done']}/{s['total']})" if s.get("total") else "")
            + (f": {s['detail']}" if s.get("detail") else "") + f", {s['t_s']} s after it was queued"
            for p, s in last.items() if p not in done]


if __name__ == "__main__":
    rows = [json.loads(text) for text in open(sys.argv[1])]
    for r in rows:
        print(line(r))
    if len(sys.argv) > 2:
        for text in in_flight(rows, [json.loads(t) for t in open(sys.argv[2])]):
            print(text)
