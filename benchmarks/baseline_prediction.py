"""How well the predicted baselines (costmodel/baselines.py) match eager and torch.compile as the H200 measured them.

The bench runs committed under benchmarks/data (bench_*_h200_*.json) timed eager PyTorch and torch.compile on an
H200 for every problem they ran (the `eager_us` and `compile_us` of each row, with the row's command). This
script predicts the same problems at the same dtype for target h200 on the CPU (nothing runs on a GPU) and
reports the error: per problem the ratio predicted / measured; over the problems the median ratio, the worst
ratio either way (max of r and 1/r), the share within 1.5x and 2x, and Spearman's rank correlation
(costmodel/quality.spearman) of predicted against measured times, for eager, torch.compile and the compile /
eager speed-up. Two rate sources are reported: the datasheet peaks (what a user
without the GPU gets) and the H200's measured ceilings (targets/roofline.H200_MEASURED: the bandwidth and
library rates isolated from the rest of the model). A problem measured in several runs is compared with the
median of its runs. The model is not fitted to these measurements (its constants: costmodel/baselines.py).

    PYTHONPATH=src python3 benchmarks/baseline_prediction.py --out-dir benchmarks/data   # CPU, ~1 min

Writes OUT_DIR/baseline_prediction_h200_<date>.json and .md with the command, machine, toolchain and date.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DTYPES = ("bf16", "fp16", "fp32")


def _dtype_of(document: dict, path: Path) -> str | None:
    """The dtype a bench file ran at: its "dtype" field, else the dtype its name ends with (fp32 "as written")."""
    declared = document.get("dtype")
    if declared in DTYPES:
        return declared
    return next((d for d in DTYPES if f"_{d}" in path.stem), None)


def measured_rows(files: list[Path]) -> dict[tuple[str, str], dict]:
    """(problem path, dtype) -> the measured eager and compile times of every run, with the runs' sources."""
    out: dict[tuple[str, str], dict] = {}
    for f in files:
        document = json.loads(f.read_text())
        dtype = _dtype_of(document, f)
        if dtype is None:
            continue
        for row in document.get("rows", []):
            if not (row.get("eager_us") and row.get("compile_us")):
                continue
            entry = out.setdefault((row["path"], dtype), {"eager_us": [], "compile_us": [], "sources": []})
            entry["eager_us"].append(row["eager_us"])
            entry["compile_us"].append(row["compile_us"])
            entry["sources"].append({"file": f.name, "command": row.get("command") or document.get("command")})
    return out


def _stats(pairs: list[tuple[float, float]]) -> dict:
    """Error of predicted against measured over (predicted, measured) pairs."""
    from kerntailor.costmodel.quality import spearman

    ratios = [p / m for p, m in pairs]
    both_ways = [max(r, 1 / r) for r in ratios]
    return {"n": len(pairs), "median_ratio": statistics.median(ratios),
            "geomean_ratio": math.exp(statistics.fmean(math.log(r) for r in ratios)),
            "worst_ratio": max(both_ways), "within_1.5x": sum(b <= 1.5 for b in both_ways) / len(pairs),
            "within_2x": sum(b <= 2.0 for b in both_ways) / len(pairs),
            "spearman": spearman([p for p, _ in pairs], [m for _, m in pairs])}


def _toolchain() -> dict:
    from kerntailor.store import toolchain_fingerprint

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except OSError:
        commit = ""
    return toolchain_fingerprint().to_dict() | {"commit": commit}


def predict(measured: dict, target_name: str) -> list[dict]:
    from kerntailor.capture.capture import capture_problem
    from kerntailor.costmodel.baselines import predict_baselines
    from kerntailor.problem import load_problem
    from kerntailor.targets import get_target
    from kerntailor.targets.roofline import H200_MEASURED

    target = get_target(target_name)
    rows = []
    for (path, dtype), m in sorted(measured.items()):
        row = {"problem": Path(path).stem, "path": path, "dtype": dtype, "runs": len(m["eager_us"]),
               "measured_eager_us": statistics.median(m["eager_us"]),
               "measured_compile_us": statistics.median(m["compile_us"]), "sources": m["sources"]}
        try:
            problem = load_problem(ROOT / path, dtype=dtype)
            graph = capture_problem(problem).graph
            vendor = predict_baselines(problem, graph, target)
            ceilings = predict_baselines(problem, graph, target, H200_MEASURED)
        except Exception as e:  # noqa: BLE001  a problem the model cannot predict is a row saying why
            rows.append(row | {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]})
            continue
        row |= {"label": vendor.label, "eager_kernels": len(vendor.eager.kernels),
                "compile_kernels": len(vendor.compile.kernels),
                "predicted_eager_us": vendor.eager.seconds * 1e6,
                "predicted_compile_us": vendor.compile.seconds * 1e6,
                "predicted_eager_us_measured_ceilings": ceilings.eager.seconds * 1e6,
                "predicted_compile_us_measured_ceilings": ceilings.compile.seconds * 1e6}
        rows.append(row)
        print(f"{row['problem']:32s} {dtype}: eager {row['predicted_eager_us']:9.1f} / {row['measured_eager_us']:9.1f}"
              f"  compile {row['predicted_compile_us']:9.1f} / {row['measured_compile_us']:9.1f} us", flush=True)
    return rows


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]
    out = {}
    for suffix, name in (("", "datasheet peaks (predicted mode)"), ("_measured_ceilings", "H200 measured ceilings")):
        out[name] = {
            "eager": _stats([(r[f"predicted_eager_us{suffix}"], r["measured_eager_us"]) for r in ok]),
            "compile": _stats([(r[f"predicted_compile_us{suffix}"], r["measured_compile_us"]) for r in ok]),
            "compile_over_eager": _stats([(r[f"predicted_compile_us{suffix}"] / r[f"predicted_eager_us{suffix}"],
                                           r["measured_compile_us"] / r["measured_eager_us"]) for r in ok]),
        }
    return out


def render(report: dict) -> str:
    lines = [f"# Predicted baselines against the H200's measured ones ({report['date']})", "",
             f"Command: `{report['command']}` on {report['machine']} (CPU; toolchain: torch "
             f"{report['toolchain'].get('torch')}, triton {report['toolchain'].get('triton')}, commit "
             f"{report['toolchain'].get('commit', '')[:7]}). Model: {report['model']}. "
             f"{report['problems']} problem x dtype pairs from {len(report['files'])} bench files"
             f"{'; ' + str(report['errors']) + ' could not be predicted' if report['errors'] else ''}.", "",
             "Ratio = predicted / measured (median over problems; worst = the largest of r and 1/r); Spearman of "
             "predicted against measured times over the problems.", "",
             "| rates | baseline | n | median ratio | geomean ratio | worst | within 1.5x | within 2x | Spearman |",
             "|---|---|---|---|---|---|---|---|---|"]
    for rates, by in report["summary"].items():
        for name, s in by.items():
            lines.append(f"| {rates} | {name.replace('_', ' ')} | {s['n']} | {s['median_ratio']:.2f} | "
                         f"{s['geomean_ratio']:.2f} | {s['worst_ratio']:.1f} | {s['within_1.5x']:.0%} | "
                         f"{s['within_2x']:.0%} | {s['spearman']:.3f} |")
    lines += ["", "| problem | dtype | eager measured µs | eager predicted µs | ratio | compile measured µs | "
                  "compile predicted µs | ratio | kernels eager / compile |", "|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        if "error" in r:
            lines.append(f"| {r['problem']} | {r['dtype']} | {r['measured_eager_us']:.1f} | - | - | "
                         f"{r['measured_compile_us']:.1f} | - | - | {r['error']} |")
            continue
        lines.append(f"| {r['problem']} | {r['dtype']} | {r['measured_eager_us']:.1f} | {r['predicted_eager_us']:.1f}"
                     f" | {r['predicted_eager_us'] / r['measured_eager_us']:.2f} | {r['measured_compile_us']:.1f} | "
                     f"{r['predicted_compile_us']:.1f} | {r['predicted_compile_us'] / r['measured_compile_us']:.2f} | "
                     f"{r['eager_kernels']} / {r['compile_kernels']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data")
    parser.add_argument("--target", default="h200")
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    files = sorted(args.data.glob(f"bench_*_{args.target}_*.json"))
    if not files:
        print(f"baseline_prediction.py: error: no bench_*_{args.target}_*.json under {args.data}", file=sys.stderr)
        return 2
    from kerntailor.costmodel.baselines import MODEL

    rows = predict(measured_rows(files), args.target)
    today = datetime.date.today().isoformat()
    report = {"command": " ".join([f"benchmarks/{Path(sys.argv[0]).name}"]
                                  + (argv if argv is not None else sys.argv[1:])),
              "machine": platform.node(), "toolchain": _toolchain(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "target": args.target, "model": MODEL, "files": [f.name for f in files],
              "problems": len(rows), "errors": sum("error" in r for r in rows),
              "summary": summary(rows), "rows": rows}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = args.out_dir / f"baseline_prediction_{args.target}_{today}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str))
    stem.with_suffix(".md").write_text(render(report))
    print(f"wrote {stem}.json and {stem}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
