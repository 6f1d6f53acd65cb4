"""Benchmark the memory-bound family: generated kernels vs eager vs torch.compile vs the roofline floor.

Two phases, so that GPU time is spent only on timing:

    # on any machine (CPU is fine): generate kernel.py for a few schedules of every covered problem
    python benchmarks/memory_bound.py prepare --dtype fp32 --work benchmarks/work/fp32
    # on the GPU: check each candidate against a float64 reference, time the candidates, keep the best,
    # then time best / eager / torch.compile interleaved in one process (kerntailor.measure.measure)
    python benchmarks/memory_bound.py run benchmarks/work/fp32 --out result.json
    # anywhere: the Markdown table for BENCHMARKS.md
    python benchmarks/memory_bound.py report result.json

Schedules per kernel come from a short fixed list (not the full search): the point is the generated
code's quality against the libraries, at the sizes in problems/.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_candidate, rel_err, schedules_of  # noqa: E402


def _schedules(gen, group, r_size: int) -> list[dict]:
    from kerntailor.codegen import default_schedule

    first = default_schedule(gen, group).knobs()
    out = [first] + [k for k in _more_schedules(gen, group, r_size, first) if k != first]
    return out


def _more_schedules(gen, group, r_size: int, first: dict) -> list[dict]:
    if group.family == "scan":
        return [dict(first, RBLOCK=1024, num_warps=4), dict(first, RBLOCK=4096, num_warps=8)]
    if group.family == "pool":
        return [dict(first, XBLOCK=256, num_warps=4), dict(first, XBLOCK=1024, num_warps=8)]
    if "SPLIT" in first:
        return [dict(first, SPLIT=256), dict(first, SPLIT=1024, RBLOCK=1024)]
    if first.get("XBLOCK", 1) > 1 and group.family == "reduction":
        return [dict(first, XBLOCK=32), dict(first, XBLOCK=128, num_warps=8)]
    if group.family == "pointwise":
        return [{"XBLOCK": 1024, "num_warps": 4}, {"XBLOCK": 2048, "num_warps": 8}, {"XBLOCK": 4096, "num_warps": 8}]
    rblock = 1 << max(0, (r_size - 1).bit_length())
    out = []
    if rblock <= 32768:
        warps = max(1, min(16, rblock // 256))
        out.append({"XBLOCK": 1, "RBLOCK": rblock, "persistent": True, "num_warps": warps})
        if warps >= 2:
            out.append({"XBLOCK": 1, "RBLOCK": rblock, "persistent": True, "num_warps": warps // 2})
        if rblock <= 8192:
            out.append({"XBLOCK": 2, "RBLOCK": rblock, "persistent": True, "num_warps": min(16, warps * 2)})
        if rblock <= 1024:
            rows = max(1, 2048 // rblock)
            out.append({"XBLOCK": rows, "RBLOCK": rblock, "persistent": True, "num_warps": 4})
            out.append({"XBLOCK": rows * 4, "RBLOCK": rblock, "persistent": True, "num_warps": 8})
        else:
            out.append({"XBLOCK": 1, "RBLOCK": rblock, "persistent": True, "num_warps": min(16, warps * 2)})
    for rb, w in ((2048, 4), (4096, 8), (8192, 16)):
        if rb < rblock:
            out.append({"XBLOCK": 1, "RBLOCK": rb, "persistent": False, "num_warps": w})
    return out


def prepare(args) -> None:
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, CodegenUnsupported, default_schedule, generate_module
    from kerntailor.errors import KerntailorError
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    manifest = []
    for path in sorted((ROOT / "problems").glob("level*/*.py")):
        try:
            problem = load_problem(path, dtype=args.dtype)
            _, gen = capture_generalized(problem)
        except KerntailorError as e:
            print(f"skip {path.name}: {e}", file=sys.stderr)
            continue
        plan = plan_fusion(gen.graph, FAMILIES)
        if any(g.family not in ("pointwise", "reduction", "scan", "pool") for g in plan.groups):
            continue
        base = {g.name: default_schedule(gen, g).knobs() for g in plan.groups}
        candidates = []
        for g in plan.groups:
            r = 1
            for k in g.reduce_axes:
                r *= g.space[k]
            for sched in _schedules(gen, g, r):
                knobs = dict(base, **{g.name: sched})
                try:
                    module = generate_module(problem, gen, plan, schedules_of(plan, knobs), "h200", "sm_90")
                except CodegenUnsupported as e:
                    print(f"skip {path.name}: {e}", file=sys.stderr)
                    break
                name = f"{path.stem}__{len(candidates)}.py"
                (work / name).write_text(module.source)
                candidates.append({"file": name, "knobs": knobs})
            base = dict(base)  # later groups keep the earlier groups' defaults
        if candidates:
            manifest.append({"problem": str(path.relative_to(ROOT)), "level": path.parent.name,
                             "kernels": len(plan.groups), "candidates": candidates})
    (work / "manifest.json").write_text(json.dumps({"dtype": args.dtype, "problems": manifest}, indent=1))
    print(f"prepared {len(manifest)} problems, {sum(len(m['candidates']) for m in manifest)} candidates in {work}")


_load = load_candidate
_rel_err = rel_err



def run(args) -> None:
    import torch

    from kerntailor.capture import capture_problem
    from kerntailor.measure.ceilings import load_ceilings
    from kerntailor.measure.floor import floor_of
    from kerntailor.measure.stopwatch import measure
    from kerntailor.problem import load_problem
    from kerntailor.targets import detect_local_target

    work = Path(args.work)
    manifest = json.loads((work / "manifest.json").read_text())
    dtype = manifest["dtype"]
    target = detect_local_target()
    measured = load_ceilings()
    ceilings = measured.to_roofline()   # bandwidths measured here (reads and writes apart); vendor compute peaks
    rows = []
    started = time.time()
    for entry in manifest["problems"]:
        if args.only and not any(o in entry["problem"] for o in args.only):
            continue
        row = {"problem": entry["problem"], "level": entry["level"], "dtype": dtype}
        try:
            problem = load_problem(ROOT / entry["problem"], dtype=None if dtype == "fp32" else dtype)
            floor = floor_of(capture_problem(problem), target, ceilings)
            row["floor_us"] = floor.microseconds
            row["min_bytes"] = floor.min_bytes
            reference = problem.make_model("default", device="cuda", seed=0)
            inputs = problem.make_inputs("default", device="cuda", seed=0)
            with torch.no_grad():
                expected = reference(*inputs)
                ref64 = problem.make_model("default", device="cuda", seed=0).double()
                exact = ref64(*[x.double() if x.is_floating_point() else x for x in inputs])
            bound = 1e-5 if dtype == "fp32" else 1.6e-2
            eager_err = _rel_err(expected, exact)
            best = None
            tried = []
            for cand in entry["candidates"]:
                try:
                    with torch.device("cuda"):
                        model = _load(work / cand["file"]).ModelNew(*problem.init_inputs("default"))
                    model.load_state_dict(reference.state_dict())
                    model = problem.cast_candidate(model.cuda()).eval()
                    with torch.no_grad():
                        err = _rel_err(model(*inputs), exact)
                    if not err <= max(bound, 4 * eager_err):
                        tried.append({"knobs": cand["knobs"], "error": f"relative error {err:.3g}"})
                        continue
                    t = measure({"c": lambda xs, m=model: m(*xs)}, [inputs], budget_s=0.3)["c"].median_s
                    tried.append({"knobs": cand["knobs"], "us": t * 1e6, "rel_err": err})
                    if best is None or t < best[0]:
                        best = (t, model, cand, err)
                except Exception as e:  # a candidate that fails to build or run is reported, not fatal
                    tried.append({"knobs": cand["knobs"], "error": f"{type(e).__name__}: {str(e)[:200]}"})
            row["tried"] = tried
            if best is None:
                row["error"] = "no candidate ran correctly"
                rows.append(row)
                continue
            compiled = torch.compile(reference)
            with torch.no_grad():
                compiled(*inputs)
            fns = {"generated": lambda xs, m=best[1]: m(*xs), "eager": lambda xs, m=reference: m(*xs),
                   "compile": lambda xs, m=compiled: m(*xs)}
            timings = measure(fns, [inputs], budget_s=1.5)
            for name, t in timings.items():
                row[f"{name}_us"] = t.median_s * 1e6
                row[f"{name}_iqr_us"] = t.iqr_s * 1e6
            row["best_knobs"] = best[2]["knobs"]
            row["rel_err"] = best[3]
            row["eager_rel_err"] = eager_err
            torch._dynamo.reset()
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "tried"}), flush=True)
        del row
        torch.cuda.empty_cache()
        _write(args, rows, dtype, measured, started)  # after every problem: a killed run keeps what it did


def _write(args, rows, dtype, measured, started) -> None:
    import torch
    import triton

    result = {
        "command": " ".join(["python"] + sys.argv), "date": datetime.date.today().isoformat(),
        "machine": f"{torch.cuda.get_device_name()} ({platform.node()})",
        "torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
        "label": f"measured on {torch.cuda.get_device_name()}",
        "ceilings": {"copy_bandwidth_Bps": measured.copy_bandwidth, "read_bandwidth_Bps": measured.read_bandwidth,
                     "write_bandwidth_Bps": measured.write_bandwidth},
        "floor_note": "floor = max(FLOPs / vendor vector peak, read bytes / measured read bandwidth + written bytes "
                      f"/ measured write bandwidth); {measured.floor_label()}",
        "wall_s": time.time() - started, "dtype": dtype, "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=1))


def report(args) -> None:
    import statistics

    for path in args.results:
        data = json.loads(Path(path).read_text())
        rows = [r for r in data["rows"] if "generated_us" in r]
        print(f"### {data['dtype']}, {data['label']} ({data['date']}; torch {data['torch']}, "
              f"triton {data['triton']})\n")
        print(f"Command: `{data['command']}`  \n{data['floor_note']}.\n")
        print("| problem | generated µs | eager µs | compile µs | floor µs | gen/floor | gen vs best lib "
              "| rel. err |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            lib = min(r["eager_us"], r["compile_us"])
            print(f"| {r['problem'].split('/')[-1][:-3]} | {r['generated_us']:.1f} | {r['eager_us']:.1f} | "
                  f"{r['compile_us']:.1f} | {r['floor_us']:.1f} | {r['generated_us'] / r['floor_us']:.2f} | "
                  f"{lib / r['generated_us']:.2f}x | {r['rel_err']:.1e} |")
        failed = [r for r in data["rows"] if "generated_us" not in r]
        for r in failed:
            print(f"| {r['problem'].split('/')[-1][:-3]} | failed: {r.get('error', '?')} | | | | | | |")
        if rows:
            ratios = [r["generated_us"] / r["floor_us"] for r in rows]
            slower = [r for r in rows if r["generated_us"] > 1.03 * min(r["eager_us"], r["compile_us"])]
            geo_e = statistics.geometric_mean([r["eager_us"] / r["generated_us"] for r in rows])
            geo_c = statistics.geometric_mean([r["compile_us"] / r["generated_us"] for r in rows])
            print(f"\nmedian generated/floor {statistics.median(ratios):.2f}; geomean speedup vs eager {geo_e:.2f}x, "
                  f"vs torch.compile {geo_c:.2f}x; more than 3 % slower than the better library: "
                  f"{len(slower)} of {len(rows)} ({', '.join(r['problem'].split('/')[-1][:-3] for r in slower)})\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--work", required=True)
    r = sub.add_parser("run")
    r.add_argument("work")
    r.add_argument("--out", required=True)
    r.add_argument("--only", nargs="*")
    q = sub.add_parser("report")
    q.add_argument("results", nargs="+")
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
