"""Benchmark the GEMM family: generated kernels vs eager (cuBLAS) vs torch.compile vs the roofline floor.

Two phases, so that GPU time is spent only on timing:

    # on any machine (CPU is fine): kernel.py for a handful of schedules of every GEMM-family problem,
    # in three settings: fp32 with precision ieee, fp32 with precision tf32x3, and bf16
    python benchmarks/gemm.py prepare --work benchmarks/work/gemm
    # on the GPU (an H200): compile the candidates in parallel, check each against a float64 reference,
    # time them, keep the best, then time best / eager / torch.compile interleaved (kerntailor.measure)
    PYTHONPATH=src python3 benchmarks/gemm.py run benchmarks/work/gemm --out gemm.json [--setting bf16]
    # anywhere: the Markdown tables for BENCHMARKS.md (several result files may be given)
    python benchmarks/gemm.py report gemm.json

`run --dry-run` exercises the run step on a CPU: Triton's interpreter, the problems' small variants, no
torch.compile, and wall-clock times that mean nothing (labelled so). It checks the candidates load, run
and compute the right numbers.

Schedules come from a short fixed list (not the search): the default knobs, the well-known good Triton
matmul configs for H100/H200 (the matmul tutorial's and Inductor's: 128x256x64 / 8 warps / 3 stages,
128x128x64 / 4 warps / 4 stages, 64x256x32 / 4 warps / 4 stages, ...), split-K where the output tiles
cannot fill the GPU, and for matrix x vector the GEMV path's row/chunk shapes. fp32 tiles take half the
BLOCK_K of the 16-bit ones (the same bytes per stage); configs whose shared memory exceeds the H200's
227 KiB per block (search/families.py's measured rule) or whose accumulator exceeds 128 fp32 registers
per thread are left out. Eager fp32 runs with TF32 off (torch's default), so fp32 rows compare full-fp32
results; the tf32x3 rows are held to the same fp32 tolerance.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_candidate, rel_err  # noqa: E402

L1, L2, L3 = (ROOT / "problems" / f"level{i}" for i in (1, 2, 3))
PROBLEMS = [L1 / f"{n}.py" for n in ("matmul_square", "matmul_tall_skinny", "matmul_transposed_a",
                                      "matmul_transposed_b", "matvec", "bmm")]
PROBLEMS += sorted(L2.glob("gemm_*.py")) + [L3 / "swiglu_mlp.py"]
# (name, dtype passed to load_problem, precision knob)
SETTINGS = (("fp32-ieee", None, "ieee"), ("fp32-tf32x3", None, "tf32x3"), ("bf16", "bf16", "ieee"))
# extra problems written into the work folder: (name, source problem, size overrides, settings)
EXTRA = (("matmul_square_8192", L1 / "matmul_square.py", {"n": 8192}, ("bf16",)),)

# (BLOCK_M, BLOCK_N, BLOCK_K for 16-bit operands, num_warps, num_stages): Triton's matmul tutorial
# (python/tutorials/03-matrix-multiplication.py, its CUDA autotune list) and Inductor's mm configs.
DOT_CONFIGS = (
    (128, 256, 64, 8, 3),
    (128, 256, 64, 8, 4),   # deeper pipelines: the H200 has 227 KiB of shared memory per block
    (256, 128, 64, 8, 4),
    (128, 128, 64, 4, 4),
    (64, 256, 32, 4, 4),
    (128, 128, 32, 4, 4),
    (256, 128, 64, 8, 3),
    (128, 64, 64, 4, 4),
    (64, 128, 64, 4, 4),
    (128, 128, 64, 8, 3),
)
# split-K schedules for outputs too small to fill the GPU: (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages, split)
SPLIT_CONFIGS = ((64, 64, 128, 4, 3, 4), (128, 64, 64, 4, 3, 2), (64, 64, 64, 4, 4, 8))
# the GEMV path (N == 1): (BLOCK_M rows, BLOCK_K chunk, warps, stages, split)
GEMV_CONFIGS = ((64, 128, 4, 2, 1), (32, 256, 4, 2, 1), (16, 512, 4, 3, 1), (128, 128, 8, 2, 1),
                (8, 1024, 4, 3, 1), (32, 128, 4, 3, 1), (16, 256, 2, 3, 1), (64, 128, 4, 2, 2))
H200_SMS = 132           # torch reports 132 SMs on the H200 (gpu-facts.md)
MAX_ACC_PER_THREAD = 128  # fp32 accumulators per thread without spills (search/families.py)


# --- prepare -----------------------------------------------------------------------------------------------

def _topological(plan):
    """The plan in launch order (swiglu_mlp's gate GEMM reads the up GEMM's output)."""
    from kerntailor.plan.fusion import Plan

    return Plan(plan.launch_order())


def _fits_h200(knobs: dict, dtype: str) -> bool:
    from kerntailor.search.families import gemm_lds_bytes
    from kerntailor.targets import get_target

    target = get_target("h200")
    if knobs["BLOCK_M"] * knobs["BLOCK_N"] > MAX_ACC_PER_THREAD * knobs["num_warps"] * target.warp_size:
        return False
    return gemm_lds_bytes(knobs, target, "fp32" if dtype == "fp32" else "bf16") <= target.lds_per_block


def schedules(gen, group, dtype: str, precision: str, limit: int) -> list[dict]:
    """The default knobs, then the fixed configs that fit this problem and the H200, at most `limit`."""
    from kerntailor.codegen import default_schedule
    from kerntailor.codegen.gemm import gemv_axis, matmul_node

    node = matmul_node(gen, group)
    first = dict(default_schedule(gen, group).knobs(), precision=precision)
    out = [first]
    if gemv_axis(gen, node):
        for bm, bk, warps, stages, split in GEMV_CONFIGS:
            out.append(dict(first, BLOCK_M=bm, BLOCK_K=bk, num_warps=warps, num_stages=stages, split_k=split))
    else:
        batch = 1
        for b in node.batch:
            batch *= b
        shrink = 2 if dtype == "fp32" else 1

        def tiles(bm, bn):
            return batch * -(-node.m // bm) * -(-node.n // bn)

        for bm, bn, bk, warps, stages in DOT_CONFIGS:
            if bn > max(16, 1 << (node.n - 1).bit_length()) or bm > max(16, 1 << (node.m - 1).bit_length()):
                continue  # a tile wider than the problem: padding
            out.append(dict(first, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk // shrink, GROUP_M=8, num_warps=warps,
                            num_stages=stages, split_k=1))
        if tiles(128, 128) < 2 * H200_SMS:
            for bm, bn, bk, warps, stages, split in SPLIT_CONFIGS:
                if node.k // split >= bk:
                    out.append(dict(first, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk // shrink, GROUP_M=8,
                                    num_warps=warps, num_stages=stages, split_k=split))
        out = [out[0]] + [k for k in out[1:] if _fits_h200(k, dtype)]
    unique = []
    for k in out:
        if k not in unique:
            unique.append(k)
    return unique[:limit]


def _problem_files(work: Path) -> list[tuple[str, Path, tuple[str, ...]]]:
    """(name, path, setting names) for every problem to benchmark; the extra ones are written to work/."""
    out = [(p.stem, p, tuple(s[0] for s in SETTINGS)) for p in PROBLEMS]
    folder = work / "problems"
    folder.mkdir(parents=True, exist_ok=True)
    for name, source, overrides, settings in EXTRA:
        text = source.read_text()
        for key, value in overrides.items():
            old = next(line for line in text.splitlines() if line.startswith(f"{key} = "))
            text = text.replace(old, f"{key} = {value}", 1)
        path = folder / f"{name}.py"
        path.write_text(text)
        out.append((name, path, settings))
    return out


def prepare(args) -> None:
    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, CodegenUnsupported, default_schedule, generate_module
    from kerntailor.codegen.gemm import MatmulSchedule, gemv_axis, matmul_node
    from kerntailor.errors import KerntailorError
    from kerntailor.plan import plan_fusion
    from kerntailor.problem import load_problem

    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, path, settings in _problem_files(work):
        for setting, dtype, precision in SETTINGS:
            if setting not in settings or (args.setting and setting not in args.setting):
                continue
            try:
                problem = load_problem(path, dtype=dtype)
                _, gen = capture_generalized(problem)
            except KerntailorError as e:
                print(f"skip {name} {setting}: {e}", file=sys.stderr)
                continue
            plan = _topological(plan_fusion(gen.graph, FAMILIES))
            gemms = [g for g in plan.groups if g.family == "matmul"]
            base = {g.name: default_schedule(gen, g) for g in plan.groups}
            folder = work / setting
            folder.mkdir(parents=True, exist_ok=True)
            candidates = []
            # one schedule for every matmul group of the problem (swiglu_mlp has three)
            for sched in schedules(gen, gemms[0], dtype or "fp32", precision, args.max_candidates):
                try:
                    chosen = dict(base, **{g.name: MatmulSchedule.from_knobs(sched) for g in gemms})
                    module = generate_module(problem, gen, plan, chosen, "h200", "sm_90")
                except CodegenUnsupported as e:
                    print(f"skip a schedule of {name} {setting}: {e}", file=sys.stderr)
                    continue
                file = f"{name}__{len(candidates)}.py"
                (folder / file).write_text(module.source)
                candidates.append({"file": f"{setting}/{file}", "knobs": sched})
            if candidates:
                rel = str(path.relative_to(work)) if path.is_relative_to(work) else str(path.relative_to(ROOT))
                gemv = bool(gemv_axis(gen, matmul_node(gen, gemms[0])))
                entries.append({"name": name, "problem": rel, "in_work": path.is_relative_to(work),
                                "level": path.parent.name if not path.is_relative_to(work) else "extra",
                                "gemv": gemv, "setting": setting, "dtype": dtype or "fp32",
                                "precision": precision, "groups": [g.family for g in plan.groups],
                                "candidates": candidates})
    (work / "manifest.json").write_text(json.dumps({"entries": entries}, indent=1))
    print(f"prepared {len(entries)} problem/setting pairs, {sum(len(e['candidates']) for e in entries)} "
          f"candidates in {work}")


# --- run ---------------------------------------------------------------------------------------------------

_load = load_candidate
_rel_err = rel_err



def _problem_path(work: Path, entry: dict) -> Path:
    return (work if entry.get("in_work") else ROOT) / entry["problem"]


def _selected(manifest: dict, args) -> list[dict]:
    return [e for e in manifest["entries"]
            if (not args.only or any(o in e["name"] for o in args.only))
            and (not args.setting or e["setting"] in args.setting)]


def _warm_entry(work: str, entry: dict) -> tuple[str, float, list[str]]:
    """Compile every candidate of one entry (a worker process): one call on the default inputs fills
    Triton's on-disk cache, so the timing process finds each kernel built."""
    import torch

    from kerntailor.problem import load_problem

    start = time.time()
    errors = []
    problem = load_problem(_problem_path(Path(work), entry), dtype=None if entry["dtype"] == "fp32" else entry["dtype"])
    with torch.no_grad():
        inputs = problem.make_inputs("default", device="cuda", seed=0)
        for cand in entry["candidates"]:
            try:
                with torch.device("cuda"):
                    model = problem.cast_candidate(_load(Path(work) / cand["file"]).ModelNew(
                        *problem.init_inputs("default")))
                model(*inputs)
                torch.cuda.synchronize()
            except Exception as e:  # reported again (and recorded) by the timing process
                errors.append(f"{cand['file']}: {type(e).__name__}: {str(e)[:120]}")
    return entry["name"] + "/" + entry["setting"], time.time() - start, errors


def _precompile(work: Path, entries: list[dict], workers: int) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    if workers <= 0 or not entries:
        return
    started = time.time()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_warm_entry, str(work), e) for e in entries]
        for f in as_completed(futures):
            try:
                name, seconds, errors = f.result()
                print(f"compiled {name} in {seconds:.0f} s" + (f"; {len(errors)} failed" if errors else ""),
                      file=sys.stderr, flush=True)
            except Exception as e:  # a crashed worker: the timing process compiles what is missing
                print(f"precompile worker failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    print(f"precompiled {len(entries)} entries in {time.time() - started:.0f} s", file=sys.stderr, flush=True)


class _Clock:
    """GPU: kerntailor.measure's interleaved, L2-flushed CUDA-event timing. Dry run (CPU): wall clock of
    one call each, which says nothing about speed; it only exercises the code path."""

    def __init__(self, dry: bool):
        self.dry = dry

    def time(self, fns: dict, inputs: list, budget_s: float) -> dict:
        if not self.dry:
            from kerntailor.measure.stopwatch import measure

            return {n: {"median_s": t.median_s, "iqr_s": t.iqr_s, "runs": t.runs}
                    for n, t in measure(fns, [inputs], budget_s=budget_s).items()}
        out = {}
        for name, fn in fns.items():
            start = time.perf_counter()
            fn(inputs)
            out[name] = {"median_s": time.perf_counter() - start, "iqr_s": 0.0, "runs": 1}
        return out


def _floors(problem, target, ceilings, precision: str, variant: str) -> dict:
    """The roofline floor in µs; for tf32x3 also the floor at the tf32 rate for its three products."""
    from kerntailor.capture import capture_problem
    from kerntailor.measure.floor import floor_of
    from kerntailor.targets.roofline import roofline_floor

    capture = capture_problem(problem, variant)
    floor = floor_of(capture, target, ceilings)
    out = {"floor_us": floor.microseconds, "floor_bound": floor.bound, "flops": capture.cost.flops,
           "min_bytes": capture.cost.min_bytes}
    if precision == "tf32x3":
        cost = capture.cost
        tf32 = roofline_floor(target, flops=3 * cost.flops_matrix, vector_flops=cost.flops_vector,
                              min_bytes=cost.min_bytes, dtype="tf32", matrix=True, ceilings=ceilings,
                              read_bytes=cost.min_bytes_read)
        out["floor_tf32x3_us"] = tf32.microseconds
    return out


def _best_candidate(work: Path, entry: dict, problem, reference, inputs, exact, bound: float, variant: str,
                    device: str, clock: _Clock):
    """(seconds, model, candidate, rel err) of the fastest correct candidate (or None), and every try."""
    import torch

    best, tried = None, []
    for cand in entry["candidates"]:
        try:
            with torch.device(device):
                model = _load(work / cand["file"]).ModelNew(*problem.init_inputs(variant))
            model.load_state_dict(reference.state_dict())
            model = problem.cast_candidate(model.to(device)).eval()
            with torch.no_grad():
                err = _rel_err(model(*inputs), exact)
            if not err <= bound:
                tried.append({"knobs": cand["knobs"], "error": f"relative error {err:.3g} > {bound:.3g}"})
                continue
            t = clock.time({"c": lambda xs, m=model: m(*xs)}, inputs, budget_s=0.3)["c"]["median_s"]
            tried.append({"knobs": cand["knobs"], "us": t * 1e6, "rel_err": err})
            if best is None or t < best[0]:
                best = (t, model, cand, err)
        except Exception as e:  # a candidate that fails to build or run is reported, not fatal
            tried.append({"knobs": cand["knobs"], "error": f"{type(e).__name__}: {str(e)[:200]}"})
    return best, tried


def _run_entry(work: Path, entry: dict, target, ceilings, clock: _Clock, dry: bool) -> dict:
    import torch

    from kerntailor.problem import load_problem

    device, variant = ("cpu", "small") if dry else ("cuda", "default")
    row = {"problem": entry["name"], "level": entry["level"], "setting": entry["setting"], "gemv": entry["gemv"],
           "dtype": entry["dtype"], "precision": entry["precision"], "variant": variant}
    problem = load_problem(_problem_path(work, entry), dtype=None if entry["dtype"] == "fp32" else entry["dtype"])
    row.update(_floors(problem, target, ceilings, entry["precision"], variant))
    reference = problem.make_model(variant, device=device, seed=0).eval()
    inputs = problem.make_inputs(variant, device=device, seed=0)
    with torch.no_grad():
        expected = reference(*inputs)
        ref64 = problem.make_model(variant, device=device, seed=0).double().eval()
        exact = ref64(*[x.double() if x.is_floating_point() else x for x in inputs])
        del ref64
    # the referee's tolerance table (fp32 1e-5, bf16 1.6e-2), widened to 4x eager's own error where larger
    eager_err = _rel_err(expected, exact)
    bound = max(1e-5 if entry["dtype"] == "fp32" else 1.6e-2, 4 * eager_err)
    best, tried = _best_candidate(work, entry, problem, reference, inputs, exact, bound, variant, device, clock)
    row["tried"] = tried
    if best is None:
        row["error"] = "no candidate ran correctly"
        return row
    fns = {"generated": lambda xs: best[1](*xs), "eager": lambda xs: reference(*xs)}
    if not dry:
        compiled = torch.compile(reference)
        with torch.no_grad():
            compiled(*inputs)
        fns["compile"] = lambda xs: compiled(*xs)
    for name, t in clock.time(fns, inputs, budget_s=1.5).items():
        row[f"{name}_us"] = t["median_s"] * 1e6
        row[f"{name}_iqr_us"] = t["iqr_s"] * 1e6
        row[f"{name}_tflops"] = row["flops"] / t["median_s"] / 1e12
    row.update(best_knobs=best[2]["knobs"], best_file=best[2]["file"], rel_err=best[3], eager_rel_err=eager_err,
               tolerance=bound)
    return row


def run(args) -> None:
    if args.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"   # before triton is imported: every kernel runs on the CPU
    import torch

    from kerntailor.targets import detect_local_target, get_target

    work = Path(args.work)
    entries = _selected(json.loads((work / "manifest.json").read_text()), args)
    if args.max_candidates:
        entries = [dict(e, candidates=e["candidates"][:args.max_candidates]) for e in entries]
    if args.dry_run:
        target, ceilings, measured = get_target("h200"), None, None
    else:
        from kerntailor.measure.ceilings import load_ceilings

        torch.backends.cuda.matmul.allow_tf32 = False    # eager fp32 = full-fp32 cuBLAS (torch's default)
        torch.backends.cudnn.allow_tf32 = False
        target = detect_local_target()
        measured = load_ceilings()
        ceilings = measured.to_roofline()   # bandwidths measured here (reads and writes apart); vendor matmul peaks
        _precompile(work, entries, args.precompile_workers)
    clock = _Clock(args.dry_run)
    rows, started = [], time.time()
    for entry in entries:
        try:
            row = _run_entry(work, entry, target, ceilings, clock, args.dry_run)
        except Exception as e:
            row = {"problem": entry["name"], "setting": entry["setting"],
                   "error": f"{type(e).__name__}: {str(e)[:300]}"}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "tried"}), flush=True)
        if not args.dry_run:
            torch._dynamo.reset()
            torch.cuda.empty_cache()
        _write(args, rows, measured, started)  # after every entry: a killed run keeps what it did


def _write(args, rows, measured, started) -> None:
    import torch
    import triton

    if args.dry_run:
        machine, label = f"CPU ({platform.node()}), Triton interpreter", "dry run: CPU interpreter, times meaningless"
    else:
        machine = f"{torch.cuda.get_device_name()} ({platform.node()})"
        label = f"measured on {torch.cuda.get_device_name()}"
    result = {
        "command": " ".join(["python"] + sys.argv), "date": datetime.date.today().isoformat(), "machine": machine,
        "torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda, "label": label,
        "allow_tf32": False, "dry_run": bool(args.dry_run),
        "ceilings": {"copy_bandwidth_Bps": measured.copy_bandwidth, "read_bandwidth_Bps": measured.read_bandwidth,
                     "write_bandwidth_Bps": measured.write_bandwidth,
                     "matmul_flops": dict(measured.matmul_flops)} if measured else None,
        "floor_note": "floor = max(matrix FLOPs / vendor matrix peak of the dtype + epilogue FLOPs / vector peak, "
                      "read bytes / measured read bandwidth + written bytes / measured write bandwidth); tf32x3 "
                      "also against 3 x FLOPs at the tf32 peak"
                      + (f"; {measured.floor_label()}" if measured else ""),
        "wall_s": time.time() - started, "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=1))


# --- report ------------------------------------------------------------------------------------------------

def _knob_text(k: dict, gemv: bool = False) -> str:
    if not k:
        return ""
    tile = f"GEMV {k.get('BLOCK_M')}x{k.get('BLOCK_K')}" if gemv else \
        f"{k.get('BLOCK_M')}x{k.get('BLOCK_N')}x{k.get('BLOCK_K')}"
    text = f"{tile} w{k.get('num_warps')} s{k.get('num_stages')}"
    if k.get("split_k", 1) > 1:
        text += f" split{k['split_k']}"
    return text


def report(args) -> None:
    import statistics

    for path in args.results:
        data = json.loads(Path(path).read_text())
        print(f"## GEMM family, {data['label']} ({data['date']}; torch {data['torch']}, triton {data['triton']}, "
              f"CUDA {data['cuda']})\n")
        print(f"Command: `{data['command']}`  \nMachine: {data['machine']}. Eager fp32 with TF32 off. "
              f"{data['floor_note']}.\n")
        settings = list(dict.fromkeys(r["setting"] for r in data["rows"]))
        for setting in settings:
            rows = [r for r in data["rows"] if r["setting"] == setting and "generated_us" in r]
            failed = [r for r in data["rows"] if r["setting"] == setting and "generated_us" not in r]
            print(f"### {setting}\n")
            print("| problem | generated µs | TFLOP/s | eager µs | compile µs | floor µs | gen/floor | "
                  "best lib / gen | rel. err | schedule |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for r in rows:
                lib = min(r["eager_us"], r.get("compile_us", float("inf")))
                floor = r.get("floor_tf32x3_us", r["floor_us"]) if setting.endswith("tf32x3") else r["floor_us"]
                compile_text = f"{r['compile_us']:.1f}" if "compile_us" in r else "–"
                print(f"| {r['problem']} | {r['generated_us']:.1f} | {r['generated_tflops']:.1f} | "
                      f"{r['eager_us']:.1f} | {compile_text} | {floor:.1f} | {r['generated_us'] / floor:.2f} | "
                      f"{lib / r['generated_us']:.2f}x | {r['rel_err']:.1e} | "
                      f"{_knob_text(r['best_knobs'], r.get('gemv', False))} |")
            for r in failed:
                print(f"| {r['problem']} | failed: {r.get('error', '?')} | | | | | | | | |")
            if rows:
                geo_e = statistics.geometric_mean([r["eager_us"] / r["generated_us"] for r in rows])
                with_compile = [r for r in rows if "compile_us" in r]
                geo_c = statistics.geometric_mean([r["compile_us"] / r["generated_us"] for r in with_compile]) \
                    if with_compile else float("nan")
                slower = [r["problem"] for r in rows
                          if r["generated_us"] > 1.03 * min(r["eager_us"], r.get("compile_us", float("inf")))]
                print(f"\ngeomean speedup vs eager {geo_e:.2f}x, vs torch.compile {geo_c:.2f}x; more than 3 % "
                      f"slower than the better library: {len(slower)} of {len(rows)} ({', '.join(slower)})\n")
        square = [r for r in data["rows"] if r.get("setting") == "bf16" and r["problem"].startswith("matmul_square")
                  and "generated_us" in r]
        if square:
            print("### bf16 square matmul vs cuBLAS (torch.matmul)\n")
            print("| problem | generated TFLOP/s | cuBLAS TFLOP/s | generated / cuBLAS |")
            print("|---|---|---|---|")
            for r in square:
                print(f"| {r['problem']} | {r['generated_tflops']:.0f} | {r['eager_tflops']:.0f} | "
                      f"{r['generated_tflops'] / r['eager_tflops']:.2f} |")
            print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    settings = [s[0] for s in SETTINGS]
    p = sub.add_parser("prepare")
    p.add_argument("--work", default=str(ROOT / "benchmarks" / "work" / "gemm"))
    p.add_argument("--setting", nargs="*", choices=settings, help="only these settings (default: all)")
    p.add_argument("--max-candidates", type=int, default=10, help="schedules per problem and setting")
    r = sub.add_parser("run")
    r.add_argument("work")
    r.add_argument("--out", required=True)
    r.add_argument("--only", nargs="*", help="problems whose name contains one of these")
    r.add_argument("--setting", nargs="*", choices=settings)
    r.add_argument("--max-candidates", type=int, default=0, help="time only the first N candidates (0: all)")
    r.add_argument("--precompile-workers", type=int, default=min(8, os.cpu_count() or 1),
                   help="processes compiling candidates before timing (0: compile while timing)")
    r.add_argument("--dry-run", action="store_true", help="CPU: interpreter, small variants, times meaningless")
    q = sub.add_parser("report")
    q.add_argument("results", nargs="+")
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
