"""`kerntailor bench SUITE --target T`: generate over a suite and summarize it, KernelBench-style.

Per problem: status, referee verdict, and times (the generated kernel, eager and torch.compile measured on
the local GPU when it is the target; otherwise the kernel's predicted time only). Summary per level and
overall: correct count; fast_p for p = 1.0, 1.2, 1.5 against eager and against torch.compile (the fraction
of problems whose emitted kernel is correct AND faster than the baseline by p; a library-path fallback is
never fast); geomean speedups; geomean floor/time (roofline efficiency).
"""

from __future__ import annotations

import datetime
import json
import math
import platform
from dataclasses import replace
from pathlib import Path
from typing import Callable

from kerntailor.errors import KerntailorError
from kerntailor.generate.pipeline import GenerateResult, GenerateSettings, generate

P_VALUES = (1.0, 1.2, 1.5)


def _row(path: Path, level: str, result: GenerateResult | None, error: str = "") -> dict:
    row = {"problem": path.stem, "path": str(path), "level": level}
    if result is None:
        return row | {"status": "error", "correct": False, "error": error}
    verdict = result.verdict
    row |= {"status": result.status, "mode": result.mode, "message": result.message,
            "correct": bool(verdict is not None and verdict.passed and result.status != "library"),
            "floor_us": (result.report.get("floor") or {}).get("us")}
    timings = {t["name"]: t["median_s"] * 1e6 for t in ((verdict.timing or {}).get("timings", []) if verdict else [])}
    if timings:
        row |= {"time_us": timings.get("candidate"), "eager_us": timings.get("eager"),
                "compile_us": timings.get("compile"), "label": "measured"}
    else:
        predicted = [k.get("seconds") for k in result.report.get("kernels", [])]
        if predicted and all(p is not None for p in predicted):
            row |= {"time_us": sum(predicted) * 1e6, "label": f"predicted for {result.target}"}
    return row


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(rows: list[dict]) -> dict:
    out = {"problems": len(rows), "correct": sum(r["correct"] for r in rows),
           "generated": sum(r["status"] == "generated" or r["status"] == "cached" for r in rows),
           "library": sum(r["status"] == "library" for r in rows)}
    for base in ("eager", "compile"):
        timed = [r for r in rows if r.get(f"{base}_us") and r.get("time_us")]
        if not timed:
            continue
        for p in P_VALUES:
            fast = [r for r in timed if r["correct"] and r[f"{base}_us"] / r["time_us"] > p]
            out[f"fast_{p}_vs_{base}"] = len(fast) / len(rows)
        out[f"geomean_speedup_vs_{base}"] = _geomean([r[f"{base}_us"] / r["time_us"] for r in timed])
    efficient = [r["floor_us"] / r["time_us"] for r in rows if r.get("floor_us") and r.get("time_us")]
    if efficient:
        out["geomean_floor_over_time"] = _geomean(efficient)
        out["efficiency_label"] = rows[0].get("label", "")
    return out


def bench(suite: Path, settings: GenerateSettings, only: list[str] | None = None,
          on_problem: Callable[[str, int, int], None] | None = None) -> dict:
    """Run generate on every problem file under `suite` (recursively); returns the bench result."""
    paths = sorted(p for p in Path(suite).rglob("*.py") if not p.name.startswith("_"))
    if only:
        paths = [p for p in paths if any(o in str(p) for o in only)]
    if not paths:
        raise KerntailorError(f"{suite}: no problem files (*.py) found")
    out_root = Path(settings.out_dir)
    rows = []
    for i, path in enumerate(paths):
        if on_problem:
            on_problem(path.stem, i, len(paths))
        level = path.parent.name
        try:
            result = generate(path, replace(settings, out_dir=out_root / level / path.stem))
            rows.append(_row(path, level, result))
        except KerntailorError as e:  # a problem the tool cannot handle is a row, not the end of the run
            rows.append(_row(path, level, None, str(e)))
    levels = sorted({r["level"] for r in rows})
    result = {
        "suite": str(suite), "target": settings.target, "dtype": settings.dtype or "as written",
        "date": datetime.date.today().isoformat(), "host": platform.node(), "rows": rows,
        "summary": {"overall": summarize(rows)} | {lv: summarize([r for r in rows if r["level"] == lv])
                                                   for lv in levels},
    }
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / "bench.json").write_text(json.dumps(result, indent=1, default=str))
    (out_root / "bench.md").write_text(render_bench(result))
    return result


def _fmt(v, digits: int = 2) -> str:
    if v is None:
        return "-"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def render_bench(result: dict) -> str:
    lines = [f"# bench {result['suite']} on {result['target']} ({result['dtype']}, {result['date']})", "",
             "| problem | level | status | correct | time µs | eager µs | compile µs | floor µs | label |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['problem']} | {r['level']} | {r['status']} | {'yes' if r['correct'] else 'no'} | "
                     f"{_fmt(r.get('time_us'), 1)} | {_fmt(r.get('eager_us'), 1)} | {_fmt(r.get('compile_us'), 1)} | "
                     f"{_fmt(r.get('floor_us'), 1)} | {r.get('label') or r.get('error') or r.get('message', '')} |")
    lines += ["", "| scope | problems | correct | generated | library | fast_1.0 eager | fast_1.2 eager | "
                  "fast_1.5 eager | fast_1.0 compile | fast_1.2 compile | fast_1.5 compile | geomean vs eager | "
                  "geomean vs compile | geomean floor/time |", "|" + "---|" * 14]
    for scope, s in result["summary"].items():
        cells = [s["problems"], s["correct"], s["generated"], s["library"]]
        cells += [s.get(f"fast_{p}_vs_{b}") for b in ("eager", "compile") for p in P_VALUES]
        cells += [s.get("geomean_speedup_vs_eager"), s.get("geomean_speedup_vs_compile"),
                  s.get("geomean_floor_over_time")]
        lines.append(f"| {scope} | " + " | ".join(_fmt(c, 3) for c in cells) + " |")
    return "\n".join(lines) + "\n"
