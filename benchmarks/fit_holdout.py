"""Are the fitted sizes right on sizes the fit never saw? For each problem file: the sizes `generate` fits (the
referee's variants and the probe: capture_generalized), then a held-out variant at random sizes (each size the
variants move drawn from [v / 2, 2 v] around the first derived variant's value, until the model builds: odd
and even, never square on purpose), captured on the meta device like the probe, and every fitted expression
evaluated at its input dims against what the model really has there. A wrong expression is a kernel that
indexes with the wrong size or stride on such an input (what the referee's edge draws found on the H100 in
20_MobileNetV2 on 2026-12-07); a dim pair fitted equal that the held-out sizes make unequal is an input the
module refuses at run time (its guards), not a wrong answer, and is counted apart.

    PYTHONPATH=src python benchmarks/fit_holdout.py [DIR_OR_FILE ...] --out benchmarks/data/fit_holdout_DATE \
        [--holdouts 2] [--limit 120] [--jobs 2]

Directories default to ../shared/kernelbench/level1..3. One child process per file (killed at --limit). Writes
OUT.json (every row, the command, machine, toolchain, date) and OUT.md (the summary and the files with wrong
expressions). CPU only: nothing runs but meta-device captures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = tuple(ROOT.parent / "shared" / "kernelbench" / f"level{k}" for k in (1, 2, 3))
ATTEMPTS = 40   # random draws of all sizes at once before moving them one at a time


def holdout_variants(problem, count: int, seed: int):
    """Up to `count` Variants named holdoutK at random sizes where the model builds and keeps its structure."""
    from kerntailor.problem.slots import _shapes, _split
    from kerntailor.problem.spec import Variant
    from kerntailor.problem.variants import _try

    base_variant = next((v for v in problem.variants if not v.is_default), None)
    if base_variant is None:
        return []
    if base_variant.literals:
        base = {("const", k): v for k, v in base_variant.overrides} | {("literal", k): v for k, v in
                                                                         base_variant.literals}

        def builds(trial):
            return _shapes(problem.source, problem.path, trial, problem.dtype, problem.name) is not None

        def variant(name, values):
            consts, literals = _split(values)
            return Variant(name, tuple(sorted(consts.items())), tuple(sorted(literals.items())))
    else:
        base = dict(base_variant.overrides)

        def builds(trial):
            return _try(problem.source, problem.path, trial, problem.dtype, problem.name) is not None

        def variant(name, values):
            return Variant(name, tuple(sorted(values.items())))

    rng = random.Random(seed)
    bounds = {k: (max(2, v // 2), max(3, 2 * v)) for k, v in base.items()}
    out = []
    for n in range(count):
        found = None
        for _ in range(ATTEMPTS):
            trial = {k: rng.randint(*b) for k, b in bounds.items()}
            if builds(trial):
                found = trial
                break
        if found is None:   # one size at a time, each kept where the model still builds
            found = dict(base)
            for k in sorted(base, key=str):
                for _ in range(6):
                    trial = {**found, k: rng.randint(*bounds[k])}
                    if builds(trial):
                        found = trial
                        break
        if found != base:
            out.append(variant(f"holdout{n}", found))
    return out


def check_file(path: str, holdouts: int) -> dict:
    """The row of one file (run in the child)."""
    from kerntailor.capture.capture import capture_generalized, capture_problem
    from kerntailor.capture.generalize import graph_slots
    from kerntailor.capture.product_rows import common_rows
    from kerntailor.problem import load_problem
    from kerntailor.problem.variants import probe_variant

    started = time.monotonic()
    problem = load_problem(path)
    _, gen = capture_generalized(problem)
    row = {"exprs": len(gen.exprs), "holdouts": [], "fit_s": round(time.monotonic() - started, 2)}
    seed = sum(map(ord, Path(path).name))
    probe = probe_variant(problem)
    fitted_on = [capture_problem(problem, v).unflattened
                 for v in list(problem.variants) + ([probe] if probe is not None else [])]
    for v in holdout_variants(problem, holdouts, seed):
        entry = {"sizes": v.describe()}
        try:
            # one choice of flattened rows for all, as capture_generalized makes it
            graph = common_rows(fitted_on + [capture_problem(problem, v).unflattened])[-1]
            if [p for p, _ in graph_slots(graph)] != [p for p, _ in graph_slots(gen.graph)]:
                entry["result"] = "structure"
                entry["detail"] = "the held-out sizes change the graph's structure"
                row["holdouts"].append(entry)
                continue
        except Exception as e:   # noqa: BLE001 - a held-out size the capture refuses: reported, not judged
            entry["result"] = "capture"
            entry["detail"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            row["holdouts"].append(entry)
            continue
        wrong = gen.wrong_at(graph)
        sizes = gen.sizes_at(graph)
        unequal = []
        # the module's run-time guards (codegen/guards.py): dims equal in every variant, and the pins of fits made
        # over part of the variants; an input that breaks one is refused with a message, never answered wrong
        for a, b in gen.equal_dims:
            if sizes.get(a) != sizes.get(b):
                unequal.append(f"{a} != {b}")
        for i, inp in enumerate(graph.inputs):   # an axis the same in every fitted variant is a literal, checked
            for axis, n in enumerate(inp.type.shape):
                traced = {g.inputs[i].type.shape[axis] for g in fitted_on}
                if len(traced) == 1 and n not in traced:
                    unequal.append(f"input {i} axis {axis}: {n}, traced {traced.pop()} in every variant")
        for pin in gen.pins:
            if pin.unless.evaluate(sizes) != 1 and \
                    math.prod(Fraction(sizes[d]) ** f for d, f in pin.factors) != pin.value:
                unequal.append(f"pin {'/'.join(map(str, pin.path))}")
        entry["result"] = "refused" if unequal else ("wrong" if wrong else "right")
        entry["wrong"] = wrong[:8]
        entry["wrong_count"] = len(wrong)
        entry["unequal"] = unequal[:4]
        row["holdouts"].append(entry)
    row["seconds"] = round(time.monotonic() - started, 2)
    return row


def run_child(path: Path, holdouts: int, limit: float) -> dict:
    t = time.monotonic()
    cmd = [sys.executable, __file__, "--child", str(path), "--holdouts", str(holdouts)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"past {limit:g} s", "wall_s": round(time.monotonic() - t, 2)}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1][:300]
        return {"status": "error", "reason": tail, "wall_s": round(time.monotonic() - t, 2)}
    return {"status": "checked", **json.loads(lines[-1]), "wall_s": round(time.monotonic() - t, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--holdouts", type=int, default=2)
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--child", type=str)
    args = ap.parse_args()
    if args.child:
        try:
            print(json.dumps(check_file(args.child, args.holdouts)))
        except Exception as e:   # noqa: BLE001 - the fit itself refused: the sweep's business, reported as such
            print(json.dumps({"refused": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}))
        return
    if args.out is None:
        ap.error("--out is required")
    files = []
    for p in args.paths or DEFAULT_DIRS:
        files += sorted(p.glob("*.py")) if p.is_dir() else [p]
    from concurrent.futures import ThreadPoolExecutor

    started = datetime.datetime.now(datetime.UTC)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda f: run_child(f, args.holdouts, args.limit), files))
    rows = [{"file": f"{f.parent.name}/{f.name}", **r} for f, r in zip(files, results)]
    import torch
    import triton

    summary = {"files": len(rows)}
    for key in ("right", "wrong", "refused", "structure", "capture"):
        summary[f"files_{key}"] = sum(1 for r in rows if any(h.get("result") == key for h in r.get("holdouts", ())))
    summary["not_fitted"] = sum(1 for r in rows if r.get("refused") or r["status"] != "checked")
    summary["no_holdout"] = sum(1 for r in rows if r["status"] == "checked" and not r.get("refused")
                                and not r.get("holdouts"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    data = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]),
            "date": started.date().isoformat(), "started_utc": started.isoformat(timespec="seconds"),
            "machine": f"CPU only, {os.cpu_count()} cores ({platform.machine()}, {platform.system()})",
            "toolchain": {"python": platform.python_version(), "torch": torch.__version__,
                          "triton": triton.__version__, "commit": commit},
            "holdouts": args.holdouts, "limit_s": args.limit, "summary": summary, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    md = [f"# Fitted sizes on held-out sizes ({data['date']})", "",
          f"Command: `{data['command']}`  ", f"Machine: {data['machine']}  ",
          f"Toolchain: python {platform.python_version()}, torch {torch.__version__}, triton {triton.__version__}, "
          f"commit {commit}", "",
          f"{summary['files']} files; per file {args.holdouts} held-out size sets. Files with a wrong expression on "
          f"some held-out set: **{summary['files_wrong']}**; refused by a fitted equality (a guard, not a wrong "
          f"answer): {summary['files_refused']}; held-out sizes that change the structure: "
          f"{summary['files_structure']}; not capturable there: {summary['files_capture']}; not fitted at all: "
          f"{summary['not_fitted']}; no held-out set built: {summary['no_holdout']}.", "",
          "| file | held-out sizes | result | first wrong expressions |", "|---|---|---|---|"]
    for r in rows:
        for h in r.get("holdouts", ()):
            if h.get("result") != "right":
                why = '; '.join(h.get('wrong', [])[:3]) or h.get('detail', '') or '; '.join(h.get('unequal', []))
                md.append(f"| {r['file']} | {h['sizes']} | {h['result']} ({h.get('wrong_count', '')}) | {why} |")
        if r.get("refused") or r["status"] != "checked":
            md.append(f"| {r['file']} | - | {r['status']} | {r.get('refused') or r.get('reason', '')} |")
    args.out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print(f"{summary}")


if __name__ == "__main__":
    main()
