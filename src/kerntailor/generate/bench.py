"""`kerntailor bench SUITE --target T`: generate over a suite and summarize it, KernelBench-style.

Per problem: status, referee verdict, and times (the generated kernel, eager and torch.compile measured on
the local GPU when it is the target; otherwise the kernel's predicted time only). Summary per level and
overall: correct count; fast_p for p = 1.0, 1.2, 1.5 against eager and against torch.compile (the fraction
of problems whose emitted kernel is correct AND faster than the baseline by p; a library-path fallback is
never fast); geomean speedups; geomean floor/time (roofline efficiency).
"""

from __future__ import annotations

import contextlib
import datetime
import fnmatch
import json
import math
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from kerntailor.errors import KerntailorError
from kerntailor.generate.html import render_bench_html, write_html
from kerntailor.generate.pipeline import GenerateResult, GenerateSettings, generate
from kerntailor.generate.report import place, stamp
from kerntailor.problem import load_problem

P_VALUES = (1.0, 1.2, 1.5)
BASELINES = ("eager", "compile", "predicted_eager", "predicted_compile")
ISA_FIELDS = ("registers", "vgprs", "agprs", "spills", "lds_bytes", "occupancy", "occupancy_rule",
              "matrix_instr_count", "matrix_instr_kinds")


def _row(path: Path, level: str, result: GenerateResult | None, error: str = "") -> dict:
    row = {"problem": path.stem, "path": str(path), "level": level}
    if result is None:
        return row | {"status": "error", "correct": False, "error": error}
    # a run served from the store has no new verdict: the stored report holds the one that won
    verdict = result.verdict.to_dict() if result.verdict is not None else (result.report.get("verdict") or None)
    passed = bool(verdict and verdict.get("passed"))
    row |= {"status": result.status, "mode": result.mode, "message": result.message,
            "served_from_store": bool(result.report.get("served_from_store")),
            # a library path runs the reference itself: neither correct nor wrong (None), labelled "library"
            "correct": None if result.status == "library" else passed,
            # a library path is written only after the reference passed its own referee (report.library_verdict
            # holds the failure where it did not: no kernel.py at all)
            "library_emitted": result.status == "library" and "library_verdict" not in result.report,
            # a mixed module: generated kernels around library calls (counted as generated; report.json says which)
            "mixed": bool(result.report.get("mixed")),
            "generated_groups": result.report.get("generated_groups", len(result.report.get("kernels", []))),
            "groups": result.report.get("groups", len(result.report.get("kernels", []))),
            "floor_us": (result.report.get("floor") or {}).get("us"),
            "floor_label": "predicted from vendor peaks (one datasheet bandwidth for reads and writes)"}
    # what would run: each kernel's schedule and the ISA facts of its build for the target (on a CPU-only
    # machine, the cross-compiled code of an absent GPU: an MI300X's VGPRs, occupancy and MFMA kinds)
    row["kernels"] = [{"group": k.get("group"), "family": k.get("family"), "config": k.get("config"),
                       "isa": {f: v for f, v in (k.get("isa") or {}).items() if f in ISA_FIELDS and v is not None}}
                      for k in result.report.get("kernels", [])]
    timing = (verdict or {}).get("timing") or {}
    timings = {t["name"]: t["median_s"] * 1e6 for t in timing.get("timings", [])}
    if timing.get("floor_s"):  # measured ceilings of this GPU (read and write or copy bandwidth, matmul rates)
        row |= {"floor_us": timing["floor_s"] * 1e6,
                "floor_label": f"measured ceilings: {timing.get('floor_label') or 'copy bandwidth'}"}
        if timing.get("library_floor_s") and _library_convolutions(result):
            # what runs has the library's convolutions, on TF32 by PyTorch's default: the ieee floor bounds nothing
            row |= {"floor_us": timing["library_floor_s"] * 1e6, "ieee_floor_us": timing["floor_s"] * 1e6,
                    "floor_label": row["floor_label"] + "; fp32 convolutions at the tf32 rate (the library's, under "
                                   "PyTorch's defaults)"}
    if timings and result.status == "library":  # what runs is the reference (eager or compiled); the loser is kept
        kept = "compile" if result.report.get("library") == "torch.compile" else "eager"
        row |= {"time_us": timings.get(kept), "rejected_candidate_us": timings.get("candidate"),
                "eager_us": timings.get("eager"), "compile_us": timings.get("compile"),
                "label": f"measured ({result.target})"}
    elif timings:
        row |= {"time_us": timings.get("candidate"), "eager_us": timings.get("eager"),
                "compile_us": timings.get("compile"), "label": f"measured ({result.target})"}
    else:
        predicted = [k.get("seconds") for k in result.report.get("kernels", [])]
        if predicted and all(p is not None for p in predicted):
            row |= {"time_us": sum(predicted) * 1e6, "label": f"predicted for {result.target}"}
    baselines = result.report.get("baselines") or {}
    if baselines.get("eager_us") is not None and not timings:
        # predicted mode: the baselines predicted too, in columns of their own, under their label
        row |= {"predicted_eager_us": baselines["eager_us"], "predicted_compile_us": baselines["compile_us"],
                "baseline_label": baselines.get("label", "predicted")}
    return row


def _library_convolutions(result) -> bool:
    """Whether the emitted module may run a library convolution: the library path, a mixed module (its library
    groups), a convolution the library outpaced, or a conv group's LIBRARY knob. Where it may, the row's floor is the
    library's (TimingReport.library_floor_s), the lower one, so it bounds what runs either way."""
    report = result.report
    return (result.status == "library" or bool(report.get("mixed")) or bool(report.get("outpaced"))
            or any((k.get("config") or {}).get("LIBRARY") for k in report.get("kernels", [])))


def speedup(row: dict, base: str) -> float | None:
    """What the user gains over `base` on this problem: baseline / the time of what the emitted module runs
    (the generated kernel, or on the library path the reference, eager or compiled). A library path with no
    measurement counts 1.0: the user keeps what they had."""
    if row["status"] in ("generated", "cached", "library") and row.get(f"{base}_us") and row.get("time_us"):
        return row[f"{base}_us"] / row["time_us"]
    return 1.0 if row["status"] == "library" else None


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _library_emitted(row: dict) -> bool:
    """Whether a library row left a kernel.py (rows written before the field: from the message)."""
    if "library_emitted" in row:
        return bool(row["library_emitted"])
    return "NOT emitted" not in (row.get("message") or "")


def summarize(rows: list[dict]) -> dict:
    out = {"problems": len(rows), "correct": sum(bool(r["correct"]) for r in rows),
           "generated": sum(r["status"] == "generated" or r["status"] == "cached" for r in rows),
           "library": sum(r["status"] == "library" for r in rows),
           "mixed": sum(bool(r.get("mixed")) and r["status"] in ("generated", "cached") for r in rows)}
    # KernelBench's own "correct": the emitted ModelNew returns the reference's outputs. The library path is the
    # reference itself, so KernelBench counts it correct (and never fast); errors and refusals are not
    emitted = sum(r["status"] == "library" and _library_emitted(r) for r in rows)
    out["kernelbench_correct"] = (out["correct"] + emitted) / len(rows) if rows else None
    # a mixed module is a generated one (its kernels are ours, the referee passed the whole module); how much of
    # it is generated: the share of fusion groups that are generated kernels, over the generated modules
    out["generated_share"] = out["generated"] / len(rows) if rows else None
    built = [r for r in rows if r["status"] in ("generated", "cached") and r.get("groups")]
    out["generated_groups_share"] = (sum(r["generated_groups"] for r in built) / sum(r["groups"] for r in built)
                                     if built else None)
    # measured baselines (eager, compile) and, in predicted mode, predicted ones (predicted_eager, predicted_compile:
    # the kernel's predicted time against the baselines' predicted times); never one figure from both
    for base in BASELINES:
        timed = [r for r in rows if r.get(f"{base}_us") and r.get("time_us")]
        if not timed:
            continue
        for p in P_VALUES:
            fast = [r for r in timed if r["correct"] and r[f"{base}_us"] / r["time_us"] > p]
            out[f"fast_{p}_vs_{base}"] = len(fast) / len(rows)
        # every problem (library path = 1.0: the user keeps the baseline), and the emitted kernels alone
        out[f"geomean_speedup_vs_{base}"] = _geomean([speedup(r, base) for r in rows])
        out[f"geomean_speedup_vs_{base}_generated"] = _geomean(
            [speedup(r, base) for r in rows if r["status"] != "library"])
    # a generated module that passed the referee but lost on time is kept as generated.py beside the library path:
    # how many problems got a correct generated module at all, and how far behind the library the kept ones are
    kept = [r for r in rows if r["status"] == "library" and r.get("rejected_candidate_us")]
    out["kept_slower"] = len(kept)
    out["passed_referee_share"] = (out["generated"] + len(kept)) / len(rows) if rows else None
    out["geomean_kept_vs_library"] = _geomean([r["time_us"] / r["rejected_candidate_us"] for r in kept
                                               if r.get("time_us")])
    efficient = [r["floor_us"] / r["time_us"] for r in rows if r.get("floor_us") and r.get("time_us")]
    if efficient:
        out["geomean_floor_over_time"] = _geomean(efficient)
        out["median_time_over_floor"] = statistics.median(1 / e for e in efficient)
        out["efficiency_label"] = rows[0].get("label", "")
    labels = sorted({r["baseline_label"] for r in rows if r.get("baseline_label")})
    if labels:
        out["predicted_baselines_label"] = "; ".join(labels)
    return out


PARTS = ("all", "memory-bound", "gemm")
ROWS_FILE = "bench.rows.jsonl"
# A suite's models/ folder holds whole models (problems/models/: a Llama decoder of several layers built from
# transformers), the input of `profile` and `optimize`, not kernel problems: a bench of the suite skips it (one
# `generate` of a whole model is not a kernel's row, and those files need the transformers extra); a bench of the
# folder itself still runs them.
MODELS_DIR = "models"


def problem_part(path: Path, dtype: str | None = None) -> str:
    """"gemm" if the plan's only compute-bound family (codegen's `Family.compute_bound`) is the matrix product,
    "memory-bound" if it has none, else "other" (convolution, attention, recurrent layers). Unloadable files count
    as "other"."""
    from kerntailor.capture.capture import capture_problem
    from kerntailor.codegen import FAMILIES, plan_of

    try:
        graph = capture_problem(load_problem(path, dtype=dtype)).graph
        families = {g.family for g in plan_of(graph).groups}
    except KerntailorError:
        return "other"
    compute = {f for f in families if FAMILIES[f].compute_bound}
    if not compute:
        return "memory-bound"
    return "gemm" if compute == {"matmul"} else "other"


def _one(path: Path, settings: GenerateSettings) -> dict:
    row = make_row(path, settings)
    append_row(Path(settings.out_dir), row)
    return row


def append_row(out_root: Path, row: dict) -> None:
    """Each finished row at once: a run cut short keeps what it did (bench.rows.jsonl, one JSON per line)."""
    with open(out_root / ROWS_FILE, "a") as f:
        f.write(json.dumps(row, default=str) + "\n")


PROGRESS_FILE = "bench.progress.jsonl"


def journal(out_root: Path, problem: str, started: float):
    """note(stage, done, total, best): one line of PROGRESS_FILE per step of a problem's run (queued, admitted,
    then generate's own progress: capture, search kN with its candidates, verify with the referee's case in
    "detail"), seconds since it was queued.
    A bench cut by a time limit leaves no row for the problems in flight; this says where each was."""
    path = Path(out_root) / PROGRESS_FILE

    def note(stage: str, done: int | None = None, total: int | None = None, best: float | None = None,
             detail: str | None = None) -> None:
        line = {"problem": problem, "stage": stage, "done": done, "total": total,
                "t_s": round(time.monotonic() - started, 1)}
        if detail:
            line["detail"] = detail
        with contextlib.suppress(OSError), open(path, "a") as f:   # a journal never fails the problem
            f.write(json.dumps(line) + "\n")
    return note


def make_row(path: Path, settings: GenerateSettings) -> dict:
    """One problem's bench row: generate into `settings.out_dir`/level/name, never an exception."""
    level = path.parent.name
    started = time.monotonic()
    note = journal(Path(settings.out_dir), path.stem, started)
    note("queued")
    waited = None
    try:
        with _admitted(path, settings):
            waited = time.monotonic() - started   # queued for GPU memory beside the other jobs (memory.py)
            note("admitted")
            result = generate(path, replace(settings, out_dir=Path(settings.out_dir) / level / path.stem),
                              progress=note)
        row = _row(path, level, result)
        # where the wall time went: the pipeline's stages and, inside its judgement, the referee's phases
        row["stage_s"] = result.report.get("stage_s")
        row["judge_phase_s"] = (result.verdict.phase_s if result.verdict is not None   # else served from the store
                                else (result.report.get("verdict") or {}).get("phase_s"))
        if result.report.get("first_pass"):   # a second pass (generated conv lost on time): the first's seconds
            row["first_pass_s"] = result.report["first_pass"]
    except MemoryError as e:   # the job's estimate exceeds the GPU: refused before it starts (measure/memory.py)
        row = _row(path, level, None, f"refused: {e}")
    except KerntailorError as e:  # a problem the tool cannot handle is a row, not the end of the run
        row = _row(path, level, None, str(e))
    except Exception as e:  # noqa: BLE001  a bug of ours on one problem: its row says so, the suite goes on
        first = str(e).splitlines()[0] if str(e) else ""
        row = _row(path, level, None, f"internal error: {type(e).__name__}: {first}"[:300])
    row["seconds"] = round(time.monotonic() - started, 1)  # wall time of this problem's generate
    if waited is not None:
        row["admission_wait_s"] = round(waited, 1)
    return row


def _admitted(path: Path, settings: GenerateSettings):
    """Wait until the GPU this job sees has memory for it beside the jobs already running (measure/memory.py);
    nothing to wait for on a machine without a GPU."""
    import contextlib

    import torch

    from kerntailor.measure.memory import gpu_reservation

    if not torch.cuda.is_available():
        return contextlib.nullcontext()
    return gpu_reservation(load_problem(path, dtype=settings.dtype))


def _init_worker(parent_pid: int, slots) -> None:
    """Pool initializer: this worker dies with the bench process (so a killed bench leaves no generate, and
    so no referee, running), and sees one GPU, taken round-robin, when there are GPUs."""
    import os

    from kerntailor.verify.sandbox import die_with_parent

    die_with_parent(parent_pid)
    if slots is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(slots.get())


def _gpu_count() -> int:
    import os

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([v for v in visible.split(",") if v.strip()])
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _run_parallel(paths: list[Path], settings: GenerateSettings, jobs: int, on_problem) -> list[dict]:
    """`jobs` problems at once, spread over the visible GPUs; timed sections are serialized per GPU by
    the stopwatch's lock, so overlapping work never shares a GPU while it is being timed."""
    import multiprocessing as mp
    import os
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = mp.get_context("spawn")  # no CUDA state is inherited
    slots = ctx.Queue()
    gpus = _gpu_count()
    visible = (os.environ.get("CUDA_VISIBLE_DEVICES") or ",".join(map(str, range(gpus)))).split(",")
    for i in range(jobs):
        slots.put(visible[i % len(visible)].strip() if gpus else "")
    rows: dict[Path, dict] = {}
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker,
                             initargs=(os.getpid(), slots if gpus else None)) as pool:
        # deeper levels first: fused problems plan more kernels and take longest, so they should not be
        # the ones left running (or cut by a time limit) at the end
        futures = {pool.submit(_one, path, settings): path
                   for path in sorted(paths, key=lambda p: p.parent.name, reverse=True)}
        for done, future in enumerate(as_completed(futures)):
            rows[futures[future]] = future.result()
            if on_problem:
                on_problem(futures[future].stem, done, len(paths))
    return [rows[p] for p in paths]


def suite_files(suite: Path) -> list[Path]:
    """The problem files under `suite` (recursively), less private ones (`_name.py`) and those of its models/
    folders (MODELS_DIR)."""
    return sorted(p for p in suite.rglob("*.py")
                  if not p.name.startswith("_") and MODELS_DIR not in p.relative_to(suite).parts[:-1])


def select(paths: list[Path], suite: Path, only: list[str]) -> list[Path]:
    """The problems `only` names: each entry is a problem's name ("relu"), its path under the suite
    ("level1/relu", with or without ".py") or a glob of either ("*relu*", "level2/*"); never a substring.
    KerntailorError for an entry that matches nothing (a typo is not an empty suite)."""
    def keys(p: Path) -> tuple[str, ...]:
        rel = p.relative_to(suite).as_posix()
        return p.stem, p.name, rel, rel.removesuffix(".py")

    chosen, unmatched = set(), []
    for pattern in only:
        hits = {p for p in paths if any(fnmatch.fnmatchcase(k, pattern) for k in keys(p))}
        if not hits:
            unmatched.append(pattern)
        chosen |= hits
    if unmatched:
        raise KerntailorError(f"--only {', '.join(repr(u) for u in unmatched)} matches no problem under {suite} "
                              "(a problem's name such as relu, its path such as level1/relu, or a glob such as "
                              "'*relu*')")
    return [p for p in paths if p in chosen]


def check_bench_out(out: Path, suite: Path, force: bool = False) -> None:
    """KerntailorError (before any work) when `out` holds the bench of another suite, unless `force`."""
    try:
        held = json.loads((Path(out) / "bench.json").read_text()).get("suite")
    except (OSError, ValueError, AttributeError):
        return
    if force or held is None or Path(held).resolve() == Path(suite).resolve():
        return
    raise KerntailorError(f"--out {out} holds the bench of another suite ({held}); pass --force to overwrite it, "
                          "or choose another --out")


def bench(suite: Path, settings: GenerateSettings, only: list[str] | None = None, *, part: str = "all",
          jobs: int = 1, on_problem: Callable[[str, int, int], None] | None = None, ray: str | None = None) -> dict:
    """Run generate on every problem file under `suite` (recursively), or on one `part` of it; returns
    the bench result. `jobs` > 1 runs that many problems at once (see `_run_parallel`); `ray`, a Ray cluster's
    address ("local": one started here), runs them as tasks on that cluster instead (generate/ray_bench.py)."""
    if part not in PARTS:
        raise KerntailorError(f"unknown --part {part!r}: choose one of {', '.join(PARTS)}")
    if jobs < 1:
        raise KerntailorError(f"--jobs must be at least 1, got {jobs}")
    if ray is not None:   # before any work: --ray without the extra is one line
        from kerntailor.generate.ray_bench import require_ray

        require_ray()
    suite = Path(suite)
    if not suite.is_dir():
        raise KerntailorError(f"{suite}: not a directory of problem files")
    paths = suite_files(suite)
    if only:
        paths = select(paths, suite, only)
    if part != "all":
        paths = [p for p in paths if problem_part(p, settings.dtype) == part]
    if not paths:
        raise KerntailorError(f"{suite}: no problem files (*.py) found")
    out_root = Path(settings.out_dir)
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / ROWS_FILE).unlink(missing_ok=True)
    started = time.monotonic()
    if ray is not None:
        from kerntailor.generate.ray_bench import run_on_ray

        rows = run_on_ray(paths, settings, ray, on_problem)
    elif jobs == 1:
        rows = []
        for i, path in enumerate(paths):
            if on_problem:
                on_problem(path.stem, i, len(paths))
            rows.append(_one(path, settings))
    else:
        rows = _run_parallel(paths, settings, jobs, on_problem)
    levels = sorted({r["level"] for r in rows})
    result = {
        "suite": str(suite.resolve()), "part": part, "jobs": jobs, "wall_s": round(time.monotonic() - started, 1),
        "target": settings.target, "dtype": settings.dtype or "as written", "precision": settings.precision,
        "date": datetime.date.today().isoformat(), "host": platform.node(), "rows": rows,
        **({"ray": ray} if ray is not None else {}),
        "summary": {"overall": summarize(rows)} | {lv: summarize([r for r in rows if r["level"] == lv])
                                                   for lv in levels},
    }
    out_root.mkdir(parents=True, exist_ok=True)
    result = stamp(result)
    place(out_root / "bench.json", json.dumps(result, indent=1, default=str))
    place(out_root / "bench.md", render_bench(result))
    write_html(out_root / "bench.html", render_bench_html, json.loads(json.dumps(result, default=str)))
    return result


def _fmt(v, digits: int = 2) -> str:
    if v is None:
        return "-"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _correct_cell(row: dict) -> str:
    """yes / no for a generated kernel; "library" for the library path (the reference itself: neither correct
    nor wrong; a row written before that field held False); "-" for an error row."""
    if row["status"] == "library":
        return "library"
    if row["status"] == "error":
        return "-"
    return "yes" if row["correct"] else "no"


def render_bench(result: dict) -> str:
    precision = result.get("precision", "ieee")
    lines = [f"# bench {result['suite']} on {result['target']} ({result['dtype']}, precision {precision}, "
             f"{result['date']})", ""]
    if precision.startswith("fp8"):
        lines += [f"Generated kernels quantize their matrix products to fp8 ({precision}); eager and torch.compile "
                  "run the problem in its own dtype.", ""]
    predicted = any(r.get("predicted_eager_us") is not None for r in result["rows"])
    extra = " predicted eager µs | predicted compile µs |" if predicted else ""
    lines += [f"| problem | level | status | correct | time µs | eager µs | compile µs |{extra} floor µs | label |",
              "|---|---|---|---|---|---|---|" + "---|" * (2 * predicted) + "---|---|"]
    for r in result["rows"]:
        cells = (f" {_fmt(r.get('predicted_eager_us'), 1)} | {_fmt(r.get('predicted_compile_us'), 1)} |"
                 if predicted else "")
        lines.append(f"| {r['problem']} | {r['level']} | {r['status']} | {_correct_cell(r)} | "
                     f"{_fmt(r.get('time_us'), 1)} | {_fmt(r.get('eager_us'), 1)} | {_fmt(r.get('compile_us'), 1)} |"
                     f"{cells} {_fmt(r.get('floor_us'), 1)} | "
                     f"{r.get('label') or r.get('error') or r.get('message', '')} |")
    if predicted:
        labels = sorted({r['baseline_label'] for r in result['rows'] if r.get('baseline_label')})
        lines += ["", f"predicted eager / predicted compile: {'; '.join(labels)}; nothing ran on the target. Eager: "
                      "one kernel per ATen op at the target's rates; torch.compile: the fusion plan's kernels "
                      "(costmodel/baselines.py). The eager µs and compile µs columns hold measured times only."]
    lines += ["", "KernelBench's metrics (against eager, as KernelBench measures): correct = the emitted module "
                  "returns the reference's outputs (a library path is the reference itself: correct, never fast); "
                  "fast_p = correct and faster than eager by more than p. Ours beside them: against torch.compile, "
                  "and the roofline floor.", "",
              "| scope | problems | KernelBench correct | fast_1 (eager) | generated | "
              "fast_1 (compile) | geomean floor/time |", "|---|---|---|---|---|---|---|"]
    for scope, s in result["summary"].items():
        cells = [s["problems"], s.get("kernelbench_correct"), s.get("fast_1.0_vs_eager"), s.get("generated_share"),
                 s.get("fast_1.0_vs_compile"), s.get("geomean_floor_over_time")]
        lines.append(f"| {scope} | " + " | ".join(_fmt(c, 3) for c in cells) + " |")
    lines += ["", "generated counts mixed modules (generated kernels around library calls inside the module: "
                  "`mixed`); `groups generated` is the share of their fusion groups that are generated kernels.",
              "", "| scope | problems | correct | generated | mixed | groups generated | library | fast_1.0 eager | "
                  "fast_1.2 eager | fast_1.5 eager | fast_1.0 compile | fast_1.2 compile | fast_1.5 compile | "
                  "geomean vs eager | geomean vs compile | geomean floor/time | median time/floor |", "|" + "---|" * 17]
    for scope, s in result["summary"].items():
        cells = [s["problems"], s["correct"], s["generated"], s.get("mixed", 0), s.get("generated_groups_share"),
                 s["library"]]
        cells += [s.get(f"fast_{p}_vs_{b}") for b in ("eager", "compile") for p in P_VALUES]
        cells += [s.get("geomean_speedup_vs_eager"), s.get("geomean_speedup_vs_compile"),
                  s.get("geomean_floor_over_time"), s.get("median_time_over_floor")]
        lines.append(f"| {scope} | " + " | ".join(_fmt(c, 3) for c in cells) + " |")
    lines += ["", "A generated module that passed the referee but was slower than the library is kept as generated.py "
                  "beside the library path (`kept`): `passed the referee` counts problems with a correct generated "
                  "module, emitted or kept; `kept: library time / theirs` is how far behind the library they are.", "",
              "| scope | problems | emitted generated | kept (slower) | passed the referee | "
              "kept: library time / theirs |", "|---|---|---|---|---|---|"]
    for scope, s in result["summary"].items():
        cells = [s["problems"], s["generated"], s.get("kept_slower"), s.get("passed_referee_share"),
                 s.get("geomean_kept_vs_library")]
        lines.append(f"| {scope} | " + " | ".join(_fmt(c, 3) for c in cells) + " |")
    lines += _predicted_summary(result)
    return "\n".join(lines) + "\n"


def _predicted_summary(result: dict) -> list[str]:
    """The predicted speed-ups (the kernel's predicted time against the predicted baselines), a table of its
    own under its label; none where no row has predicted baselines."""
    summary = result["summary"]
    label = next((s["predicted_baselines_label"] for s in summary.values() if s.get("predicted_baselines_label")),
                 None)
    if label is None:
        return []
    lines = ["", f"Predicted speed-ups, {label} (the kernel's predicted time against the predicted baselines; "
                 "a library path counts 1.0):", "",
             "| scope | problems | fast_1.0 eager | fast_1.2 eager | fast_1.5 eager | fast_1.0 compile | "
             "fast_1.2 compile | fast_1.5 compile | geomean vs eager | geomean vs compile |", "|" + "---|" * 10]
    for scope, s in summary.items():
        cells = [s["problems"]] + [s.get(f"fast_{p}_vs_predicted_{b}") for b in ("eager", "compile")
                                   for p in P_VALUES]
        cells += [s.get("geomean_speedup_vs_predicted_eager"), s.get("geomean_speedup_vs_predicted_compile")]
        lines.append(f"| {scope} | " + " | ".join(_fmt(c, 3) for c in cells) + " |")
    return lines
