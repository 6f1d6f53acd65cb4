"""How well the analytical cost model ranks schedules, against the H200 measurements of the memory-bound
benchmark (every schedule `benchmarks/memory_bound.py run` timed is a held-back measurement: the
analytical model is never trained).

For each single-kernel problem, every timed candidate file in the benchmark's work directory is
cross-compiled for sm_90 (its ISA facts feed the model) and the model predicts its time on the h200
target. Reported per dtype: top-1 and top-2 hit rate (the measured-fastest schedule is the model's first,
or among its first two) and the mean Spearman rank correlation over problems with 3 or more schedules.

    python benchmarks/costmodel_quality.py benchmarks/data/memory_bound_fp32_h200_2026-11-29.json \
        benchmarks/work/fp32 --out benchmarks/data/costmodel_quality_h200_fp32.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import schedules_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from kerntailor.builder import build_many
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, generate_module
    from kerntailor.costmodel import AnalyticalModel, Candidate
    from kerntailor.costmodel.quality import Row, score
    from kerntailor.generate.kernels import group_work, kernel_source
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem
    from kerntailor.search.config import Config
    from kerntailor.targets import get_target

    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("work")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    data = json.loads(Path(args.results).read_text())
    target = get_target("h200")
    model = AnalyticalModel(target)
    rows, details = [], []
    for entry in data["rows"]:
        tried = [t for t in entry.get("tried", []) if "us" in t]
        if len(tried) < 2 or len(tried[0]["knobs"]) != 1:
            continue
        problem = load_problem(ROOT / entry["problem"], dtype=None if data["dtype"] == "fp32" else data["dtype"])
        capture, gen = capture_generalized(problem)
        plan = plan_fusion(gen.graph, FAMILIES)
        group = plan.groups[0]
        work, sizes = group_work(gen, group, capture.cost.dtype)
        sources, configs = [], []
        for t in tried:
            knobs = t["knobs"][group.name]
            module = generate_module(problem, gen, plan, schedules_of(plan, t["knobs"]), target.name, target.arch)
            sources.append(kernel_source(module.source, module.kernels[0], gen))
            configs.append(Config(group.family, tuple((k, v) for k, v in knobs.items() if k != "SPLIT")))
        builds = build_many(sources, [target], timeout_s=300)
        predicted = []
        for t, config, build in zip(tried, configs, builds):
            w = work
            if "SPLIT" in t["knobs"][group.name]:
                split = t["knobs"][group.name]["SPLIT"]
                from dataclasses import replace

                w = replace(work, sizes=(("R", -(-sizes["R"] // split)), ("X", split)))
            cand = Candidate(config, w, facts=build.facts if build.ok else None)
            seconds = model.predict([cand])[0]
            predicted.append(seconds)
            rows.append(Row(cand, t["us"] * 1e-6, group=entry["problem"]))
        details.append({"problem": entry["problem"], "measured_us": [t["us"] for t in tried],
                        "predicted_us": [p * 1e6 for p in predicted], "knobs": [t["knobs"] for t in tried]})
        print(entry["problem"], [round(t["us"], 1) for t in tried], [round(p * 1e6, 1) for p in predicted],
              flush=True)
    predicted_all = [p * 1e-6 for d in details for p in d["predicted_us"]]
    q1 = score(predicted_all, rows, k=1)
    q2 = score(predicted_all, rows, k=2)
    spearmans = [g.spearman for g in q1.groups if g.n >= 3 and not math.isnan(g.spearman)]
    result = {
        "command": " ".join(["python"] + sys.argv), "date": datetime.date.today().isoformat(),
        "measurements": data["label"] + f" ({data['date']}, torch {data['torch']}, triton {data['triton']})",
        "model": "kerntailor.costmodel.AnalyticalModel(h200), vendor peaks, unfitted constants",
        "dtype": data["dtype"], "problems": len(details), "schedules": len(rows),
        "top1_hit_rate": q1.top5_hit_rate,  # Quality names the rate for k=5; here k=1
        "top2_hit_rate": q2.top5_hit_rate,
        "mean_spearman_3plus": sum(spearmans) / len(spearmans) if spearmans else None,
        "problems_3plus": len(spearmans), "details": details,
    }
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "details"}, indent=1))


if __name__ == "__main__":
    main()
