"""Benchmark: the generated attention modules (codegen/attention.py) against what a user runs instead, on one GPU.

For each attention problem (problems/level1/sdpa.py and the level-3 attention problems) at its own (KernelBench)
sizes: kernel.py as generate_module emits it for sm_90 under the attention group's default schedule and at fixed
configs (--configs: the search's seeds for the target, a small grid around them, or configs named on the command
line; other groups at their defaults), eager PyTorch (and which SDPA backend eager ran, from the profiler: flash,
efficient, cuDNN or math), torch.compile (default mode), and the floor: matrix FLOPs at the measured bf16 (or
fp32/tf32) matmul rate, minimum bytes (every input read once, every output written once) at the measured copy
bandwidth (measure/ceilings.py). Timing: measure/stopwatch.py (interleaved, L2 flushed before every run, CUDA
events, medians). Every candidate's output is checked against eager's (relative error in float64) before it is
timed; a config that fails to generate, compile or run is a row with its error, not the end of the problem.
Problems whose attention is written out (causal_attention_masked, decode_attention) are one attention group too
(capture/rewrite_attention.py), their mask a boolean operand (the causal one recognised as is_causal).

    PYTHONPATH=src python3 benchmarks/attention.py --dtype bf16 --out DIR          # on the GPU machine (~4 min)
    PYTHONPATH=src python3 benchmarks/attention.py --dtype bf16,fp32 --only sdpa,causal_sdpa,gqa --configs grid \
        --out DIR                                                                  # the seeds + a grid, 2 dtypes
    PYTHONPATH=src python3 benchmarks/attention.py --configs 128x128/8w/3s/tma,128x64/8w/2s --only sdpa --out DIR
    PYTHONPATH=src python3 benchmarks/attention.py --dtype bf16,fp32 --configs grid --dry-run --out DIR
                                                  # CPU: the plan (configs per problem, each generated), no run
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/attention.py --smoke --out DIR   # CPU: small variants,
                                                                                          # values only, no times
Writes DIR/attention_<dtype>.json per dtype with the command, machine, toolchain and date.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load_candidate, rel_err  # noqa: E402

PROBLEMS = {
    "sdpa": ROOT / "problems" / "level1" / "sdpa.py",
    "causal_sdpa": ROOT / "problems" / "level3" / "causal_attention_sdpa.py",
    "gqa": ROOT / "problems" / "level3" / "gqa_causal_attention.py",
    "causal_masked": ROOT / "problems" / "level3" / "causal_attention_masked.py",
    "decode": ROOT / "problems" / "level3" / "decode_attention.py",
}
SLOW = {"llama_block": ROOT / "problems" / "level3" / "llama_decoder_block.py"}   # with --only llama_block


GRID = {"BLOCK_M": (64, 128), "BLOCK_N": (64, 128), "num_warps": (4, 8), "num_stages": (2, 3)}


def _tutorial_keeps(knobs: dict) -> bool:
    """Triton's fused-attention tutorial's pruning on Hopper: 8 warps only for tiles of at least 128 x 128."""
    return knobs["num_warps"] < 8 or knobs["BLOCK_M"] * knobs["BLOCK_N"] >= 128 * 128


def parse_config(text: str) -> dict:
    """'128x64/8w/3s' (BLOCK_M x BLOCK_N / warps / stages), '/tma' after it for TMA loads (sm_90), '/split8' for 8
    key chunks (codegen/attention_split.py), '/pack' for GQA's query heads packed in the rows (PACK), as knobs."""
    try:
        tile, warps, stages, *rest = text.strip().split("/")
        split = [r for r in rest if r.startswith("split")]
        if any(r not in ("tma", "pack") for r in rest if r not in split) or len(split) > 1 or \
                len(rest) != len(set(rest)):
            raise ValueError(text)
        bm, bn = tile.split("x")
        knobs = {"BLOCK_M": int(bm), "BLOCK_N": int(bn), "num_warps": int(warps.rstrip("w")),
                 "num_stages": int(stages.rstrip("s")), "TMA": int("tma" in rest)}
        return knobs | ({"SPLIT": int(split[0].removeprefix("split"))} if split else {}) | \
            ({"PACK": 1} if "pack" in rest else {})
    except ValueError:
        raise ValueError(f"config {text!r} is not BLOCK_MxBLOCK_N/<warps>w/<stages>s[/tma][/splitN][/pack], e.g. "
                         "128x64/8w/3s/tma") from None


def _label(knobs: dict) -> str:
    label = f"{knobs['BLOCK_M']}x{knobs['BLOCK_N']}/{knobs['num_warps']}w/{knobs['num_stages']}s"
    label += ("/tma" if knobs.get("TMA") else "") + (f"/split{knobs['SPLIT']}" if knobs.get("SPLIT", 1) > 1 else "")
    label += "/pack" if knobs.get("PACK") else ""
    return label + (f"/{knobs['precision']}" if knobs.get("precision", "ieee") != "ieee" else "")


def _config_knobs(configs: str, seeds: list[dict]) -> list[tuple[dict, bool]]:
    """(knobs, whether a config outside the search space is still timed): the seeds ("seeds"), the seeds and the
    GRID ("grid": its points the tutorial keeps, inside the space), or the configs named (timed even outside the
    space)."""
    if configs in ("seeds", "grid"):
        out = [(k, False) for k in seeds]
        if configs == "grid":
            grid = [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]
            out += [(k, False) for k in grid if _tutorial_keeps(k)]
        return out
    return [(parse_config(c), True) for c in configs.split(",") if c.strip()]


def _schedules(gen, plan, target, dtype_key: str, smoke: bool, configs: str = "seeds",
               precision: str = "ieee") -> list[tuple[str, dict | None, str | None]]:
    """(label, {group: schedule} or None, why not) to time: every group at its default; the attention group also
    at each config (--configs), once each; a config the schedule or the space refuses is a row with the reason."""
    from kerntailor.codegen import default_schedule
    from kerntailor.codegen.attention import work_sizes
    from kerntailor.search.families import make_space, seed_knobs

    fp32 = dtype_key == "fp32"
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    att = [g for g in plan.groups if g.family == "attention"]
    if att and fp32:
        base[att[0].name] = base[att[0].name].retune({"precision": precision})
    out = [("default", base, None)]
    if smoke or not att:
        return out
    (group,) = att
    sizes = work_sizes(gen, group)
    space = make_space("attention", target, dtype=dtype_key, **sizes)
    seen = {base[group.name]}
    for knobs, forced in _config_knobs(configs, seed_knobs("attention", target, dtype=dtype_key, **sizes)):
        knobs = knobs | ({"precision": precision} if fp32 else {})
        label = _label(knobs)
        try:
            schedule = base[group.name].retune(knobs)
        except Exception as e:   # ScheduleError: not a schedule at all
            out.append((label, None, f"{type(e).__name__}: {e}"))
            continue
        if schedule in seen:
            continue
        seen.add(schedule)
        why = space.violations(space.config_of(schedule))
        if why and not forced:
            continue
        out.append((label + (" (outside the space)" if why else ""), dict(base, **{group.name: schedule}), None))
    return out


def _eager_backend(model, inputs) -> list[str]:
    """The SDPA operators eager ran (profiler op names), e.g. aten::_scaled_dot_product_flash_attention."""
    import torch

    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model(*inputs)
    return sorted({e.key for e in prof.key_averages() if "scaled_dot_product" in e.key and e.key.count("_") > 3})


def _floor(capture, ceilings, dtype_key: str) -> dict:
    cost = capture.cost
    rate = ceilings.matmul("bf16" if dtype_key in ("bf16", "fp16") else "fp32")
    compute = cost.flops_matrix / rate if rate else 0.0
    memory = cost.min_bytes / ceilings.copy_bandwidth
    return {"us": max(compute, memory) * 1e6, "compute_us": compute * 1e6, "memory_us": memory * 1e6,
            "matrix_flops": cost.flops_matrix, "min_bytes": cost.min_bytes, "matmul_rate": rate,
            "copy_bandwidth": ceilings.copy_bandwidth}


def bench_problem(name: str, path: Path, dtype: str | None, smoke: bool, workdir: Path, configs: str = "seeds",
                  precision: str = "ieee", dry_run: bool = False) -> dict:
    import torch

    from kerntailor.capture.capture import capture_generalized, capture_problem
    from kerntailor.codegen import FAMILIES, generate_module
    from kerntailor.plan import plan_fusion
    from kerntailor.plan.fusion import Plan
    from kerntailor.problem import load_problem
    from kerntailor.targets import get_target

    spec = load_problem(path, dtype=dtype)
    _, gen = capture_generalized(spec)
    plan = Plan(plan_fusion(gen.graph, FAMILIES).launch_order())
    target = get_target("h200")
    dtype_key = {"bf16": "bf16", "fp16": "fp16"}.get(dtype or "", "fp32")
    device = "cpu" if smoke else "cuda"
    variant = "small" if smoke else "default"
    rows = _schedules(gen, plan, target, dtype_key, smoke, configs, precision)
    if dry_run:   # the plan only: each config generated (CPU), nothing compiled or run
        record = {"problem": name, "path": str(path.relative_to(ROOT)), "families": [g.family for g in plan.groups],
                  "candidates": []}
        for label, schedules, why in rows:
            entry = {"label": label}
            if schedules is None:
                entry["error"] = why
            else:
                entry["knobs"] = {g: s.knobs() for g, s in schedules.items() if g in _attention_groups(plan)}
                try:
                    entry["source_chars"] = len(generate_module(spec, gen, plan, schedules, "h200", "sm_90").source)
                except Exception as e:
                    entry["error"] = f"{type(e).__name__}: {e}"[:500]
            record["candidates"].append(entry)
        return record
    capture = capture_problem(spec, variant)
    torch.manual_seed(0)
    inputs = spec.make_inputs(variant, device=device)
    model = spec.make_model(variant, device=device)
    record = {"problem": name, "path": str(path.relative_to(ROOT)), "variant": variant,
              "families": [g.family for g in plan.groups], "candidates": []}
    with torch.no_grad():
        expected = model(*inputs)
    from kerntailor.verify.tolerance import TOLERANCES

    tolerance = TOLERANCES["tf32" if dtype_key == "fp32" and precision == "tf32" else dtype_key].norm
    fns = {}
    for label, schedules, why in rows:
        if schedules is None:
            record["candidates"].append({"label": label, "error": why})
            continue
        entry = {"label": label, "knobs": {g: s.knobs() for g, s in schedules.items()}}
        try:
            source = generate_module(spec, gen, plan, schedules, "h200", "sm_90").source
            file = workdir / f"{name}_{len(record['candidates'])}.py"
            file.write_text(source)
            module = load_candidate(file, "attn")
            candidate = spec.cast_candidate(module.ModelNew(*spec.init_inputs(variant)).to(device))
            candidate.load_state_dict(model.state_dict())
            with torch.no_grad():
                entry["rel_err"] = rel_err(candidate(*inputs), expected)
            entry["within_tolerance"] = entry["rel_err"] <= tolerance   # against eager's output, not float64's
            fns[f"generated:{label}"] = (lambda m: lambda xs: m(*xs))(candidate)
        except Exception as e:   # a schedule that does not compile or run is a result, not a crash
            entry["error"] = f"{type(e).__name__}: {e}"[:500]
        record["candidates"].append(entry)
    if smoke:
        return record
    record["eager_sdpa_ops"] = _eager_backend(model, inputs)
    fns["eager"] = lambda xs: model(*xs)
    try:   # compiled and run once here: a compile failure is a row, not the end of the problem
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(*inputs)
        fns["torch.compile"] = lambda xs: compiled(*xs)
    except Exception as e:
        record["compile_error"] = f"{type(e).__name__}: {e}"[:500]
    from kerntailor.measure.ceilings import load_ceilings
    from kerntailor.measure.stopwatch import measure

    timings = measure(fns, [inputs], budget_s=3.0, max_runs=100)
    record["times_us"] = {n: t.median_s * 1e6 for n, t in timings.items()}
    record["quartiles_us"] = {n: [t.q1_s * 1e6, t.q3_s * 1e6] for n, t in timings.items()}
    record["floor"] = _floor(capture, load_ceilings(torch.device("cuda")), dtype_key)
    good = {f"generated:{c['label']}" for c in record["candidates"] if c.get("within_tolerance")}
    timed = [(v, n) for n, v in record["times_us"].items() if n in good]
    if timed:   # the fastest candidate within the dtype's tolerance
        best = min(timed)
        record["best_generated"] = best[1]
        record["speedup_vs_eager"] = record["times_us"]["eager"] / best[0]
        if "torch.compile" in record["times_us"]:
            record["speedup_vs_compile"] = record["times_us"]["torch.compile"] / best[0]
        record["time_over_floor"] = best[0] / record["floor"]["us"]
    return record


def _attention_groups(plan) -> set[str]:
    return {g.name for g in plan.groups if g.family == "attention"}


def _toolchain() -> dict:
    """The project's toolchain fingerprint (store/keys.py: torch, triton, python, kerntailor, CUDA/ROCm, driver,
    GPU) and the commit the script ran at."""
    from kerntailor.store import toolchain_fingerprint

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except OSError:
        commit = ""
    return toolchain_fingerprint().to_dict() | {"commit": commit}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bf16", help="bf16 | fp16 | fp32 (as written), or several: bf16,fp32")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", default="", help=f"comma-separated names of {', '.join(PROBLEMS | SLOW)}")
    parser.add_argument("--configs", default="seeds",
                        help="the attention configs timed beside the default: seeds (the search's for sm_90), grid "
                             "(the seeds and the points of a small grid inside the space), or a list such as "
                             "128x128/8w/3s/tma,128x64/8w/2s (timed even outside the space; /tma: TMA loads)")
    parser.add_argument("--precision", default="ieee", help="fp32 operands' dot policy: ieee | tf32 | tf32x3")
    parser.add_argument("--smoke", action="store_true", help="CPU: small variants under TRITON_INTERPRET, no times")
    parser.add_argument("--dry-run", action="store_true",
                        help="CPU: print the plan (each problem's configs, generated) without running anything")
    parser.add_argument("--deadline-s", type=float, default=220.0, help="stop starting problems after this")
    args = parser.parse_args(argv)
    dtypes = [d for d in args.dtype.split(",") if d]
    known = PROBLEMS | SLOW
    names = [n for n in args.only.split(",") if n] or list(PROBLEMS)
    unknown = [n for n in names if n not in known]
    bad = [d for d in dtypes if d not in ("bf16", "fp16", "fp32")]
    if unknown or bad:
        what = f"problem {', '.join(unknown)}" if unknown else f"dtype {', '.join(bad)}"
        print(f"attention.py: error: unknown {what}; known: {', '.join(known)}; bf16, fp16, fp32", file=sys.stderr)
        return 2
    if args.configs not in ("seeds", "grid"):
        try:
            _config_knobs(args.configs, [])
        except ValueError as e:
            print(f"attention.py: error: {e}", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    for dtype_arg in dtypes:
        dtype = None if dtype_arg == "fp32" else dtype_arg
        results = []
        with tempfile.TemporaryDirectory(prefix="kt-attn-") as tmp:
            for name in names:
                if time.time() - start > args.deadline_s:
                    results.append({"problem": name, "skipped": f"deadline of {args.deadline_s:.0f} s reached"})
                    continue
                try:
                    results.append(bench_problem(name, known[name], dtype, args.smoke, Path(tmp), args.configs,
                                                 args.precision, args.dry_run))
                except Exception as e:
                    results.append({"problem": name, "error": f"{type(e).__name__}: {e}"[:1000]})
                _print(results[-1], dtype_arg, args.dry_run)
        report = {"command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
                  "machine": platform.node(), "toolchain": _toolchain(),
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "dtype": dtype_arg, "configs": args.configs, "precision": args.precision, "smoke": args.smoke,
                  "dry_run": args.dry_run, "seconds": round(time.time() - start, 1), "results": results}
        suffix = "_smoke" if args.smoke else "_plan" if args.dry_run else ""
        out = args.out / f"attention_{dtype_arg}{suffix}.json"
        out.write_text(json.dumps(report, indent=1, default=str))
        print(f"wrote {out}", flush=True)
    return 0


def _print(record: dict, dtype: str, dry_run: bool) -> None:
    """One problem's record: the plan's lines under --dry-run, else its JSON (cut at 2000 characters)."""
    if not dry_run or "candidates" not in record:
        print(json.dumps(record, default=str)[:2000], flush=True)
        return
    print(f"{dtype} {record['problem']}: {len(record['candidates'])} candidates", flush=True)
    for c in record["candidates"]:
        print(f"    {c['label']:<40} {c.get('error') or c.get('knobs')}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
