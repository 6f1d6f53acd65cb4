"""`kerntailor generate`: problem + target in, the best verified kernel out, with a report.

capture → plan → per fusion group: schedule space → search (build for the target; predict with the
cost model, or time on the local GPU when it is the target) → emit kernel.py → referee (interpreter on
CPU, the GPU when present; timed against eager and torch.compile on the GPU) → store → report.

A generated module that fails the referee is never emitted as the answer: the next-best schedules are
tried, and if none passes (or, measured, none beats the better baseline) the library path is emitted
and the report says so. The user's model never gets slower.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from kerntailor.capture.capture import capture_generalized
from kerntailor.codegen import CodegenUnsupported, default_schedule, generate_module
from kerntailor.costmodel import Work
from kerntailor.costmodel.persist import load_ranker, work_to_json
from kerntailor.errors import KerntailorError
from kerntailor.generate.evaluate import Evaluation, Evaluator
from kerntailor.generate.report import library_module, write_report
from kerntailor.generate.sources import PROPOSERS, combine
from kerntailor.inspect import floor_of
from kerntailor.plan import FusionGroup, plan_fusion
from kerntailor.problem import ProblemSpec, load_problem
from kerntailor.precision import PRECISIONS, fp8_format, is_fp8
from kerntailor.search.config import Config
from kerntailor.search.families import make_space, seed_knobs
from kerntailor.search.registry import get_strategy
from kerntailor.search.strategy import Budget, Trial
from kerntailor.targets import Target, detect_local_target, resolve_target
from kerntailor.verify import Verdict, VerifySettings, verify_candidate

LIBRARY = "library"   # the store family of a library-path decision


@dataclass(frozen=True)
class GenerateSettings:
    """What the user sets (never tuned)."""

    target: str = "mi300x"
    dtype: str | None = None
    budget_s: float = 120.0
    max_candidates: int = 48        # per fusion group
    out_dir: Path = Path("out")
    strategy: str = "evolutionary"
    seed: int = 0
    use_store: bool = True
    store_path: Path | None = None
    runners_up: int = 3             # schedules tried in turn when the best fails the referee
    precision: str = "ieee"         # matrix products: ieee | tf32x3 (fp32-level accuracy) | tf32 (judged by the
                                    # tf32 tolerance) for fp32 operands; fp8-row | fp8-tensor (operands of
                                    # every product quantized, precision.py) for any; 16-bit operands
                                    # otherwise always multiply exactly and accumulate in fp32

    proposer: str = "template"      # template | llm | all (generate/sources.py)
    seed_kernel: Path | None = None # a user's kernel file: judged, and a contender (the LLM's starting point)
    llm_attempts: int = 2
    llm_turns: int = 3

    def __post_init__(self):
        if self.proposer not in PROPOSERS:
            raise KerntailorError(f"unknown proposer {self.proposer!r}: choose one of {', '.join(PROPOSERS)}")
        if self.precision not in PRECISIONS:
            raise KerntailorError(f"unknown precision {self.precision!r}: choose one of {', '.join(PRECISIONS)}")


@dataclass(frozen=True)
class GroupResult:
    group: str
    family: str
    nodes: tuple[str, ...]
    config: dict
    seconds: float | None
    label: str                      # "measured on <gpu>" | "predicted for <target> (analytical model)"
    facts: dict | None
    trials: int
    failed: int
    runners_up: tuple[tuple[dict, float], ...]


@dataclass(frozen=True)
class GenerateResult:
    problem: str
    target: str
    mode: str                       # "measured" | "predicted"
    status: str                     # "generated" | "library" | "cached"
    message: str
    kernel_path: Path
    report_path: Path
    verdict: Verdict | None = None
    groups: tuple[GroupResult, ...] = ()
    report: dict = field(default_factory=dict, compare=False)


Progress = Callable[[str, int, int, float | None], None]  # stage, done, total, best seconds


def _work(gen, group: FusionGroup, dtype: str) -> tuple[Work, dict]:
    nodes = [gen.graph.node(n) for n in group.nodes]
    flops = sum(n.flops() for n in nodes)
    total = 1
    for s in group.space:
        total *= s
    if group.family in ("reduction", "scan"):
        axes = group.reduce_axes if group.family == "reduction" else (nodes[0].axis,)
        r = 1
        for k in axes:
            r *= group.space[k]
        sizes = {"R": r, "X": max(1, total // r)}
    elif group.family == "pool":
        sizes = {"numel": nodes[0].out.numel}
    elif group.family == "matmul":
        from kerntailor.codegen.gemm import work_sizes

        sizes = work_sizes(gen, group)
        matrix = sum(n.flops() for n in nodes[:1])
        return Work(matrix, group.bytes_moved, dtype, True, tuple(sizes.items()), flops - matrix), sizes
    else:
        sizes = {"numel": total}
    work_sizes = {"R": sizes["R"], "X": sizes["X"]} if "R" in sizes else {"numel": sizes["numel"]}
    return Work(flops, group.bytes_moved, dtype, False, tuple(work_sizes.items())), sizes


def generate(problem_path: str | Path, settings: GenerateSettings, progress: Progress | None = None) -> GenerateResult:
    """The best verified kernel for the problem on the target (module docstring); with a seed kernel or the
    LLM proposer, their kernels compete with the template's (generate/sources.py)."""
    if settings.proposer == "template" and settings.seed_kernel is None:
        return _generate_template(problem_path, settings, progress)
    template = None
    if settings.proposer != "llm":  # the store is not consulted: other sources were asked for
        template = _generate_template(problem_path, replace(settings, use_store=False), progress)
    local = detect_local_target()
    measured = local is not None and local.name == resolve_target(settings.target).name
    return combine(problem_path, settings, template, progress, measured=measured)


def _generate_template(problem_path: str | Path, settings: GenerateSettings,
                       progress: Progress | None = None) -> GenerateResult:
    started = time.monotonic()
    progress = progress or (lambda *a: None)
    target = resolve_target(settings.target)
    problem = load_problem(problem_path, dtype=settings.dtype)
    local = detect_local_target()
    measured = local is not None and local.name == target.name
    mode = "measured" if measured else "predicted"
    out = Path(settings.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kernel_path, report_path = out / "kernel.py", out / "report.json"

    store, run_id, pkey, toolchain = _open_store(settings, problem, target)
    if store is not None:
        hit = store.lookup_winner(pkey, toolchain)
        if hit is not None:
            kernel_path.write_text(hit.candidate.source or "")
            report = dict(hit.report or {}) | {"served_from_store": True}
            write_report(report, out)
            store.finish_run(run_id, "cached")
            if hit.candidate.family == LIBRARY:
                return GenerateResult(problem.name, target.name, mode, "library",
                                      f"library path, served from the store (decided by an earlier run: "
                                      f"{report.get('reason', '?')})", kernel_path, report_path, report=report)
            return GenerateResult(problem.name, target.name, mode, "cached",
                                  f"served from the store (winner of an earlier run, {hit.label})",
                                  kernel_path, report_path, report=report)

    progress("capture", 0, 1, None)
    capture, gen = capture_generalized(problem)
    plan = plan_fusion(gen.graph)
    if is_fp8(settings.precision):
        _check_fp8(plan, gen, target, settings.precision)
    floor = floor_of(capture, target, precision=settings.precision)
    try:
        schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
        for g in plan.groups:   # the user's precision policy is not a knob the search may change
            if g.family == "matmul":
                schedules[g.name] = replace(schedules[g.name], precision=settings.precision)
        generate_module(problem, gen, plan, schedules, target.name, target.arch)
    except CodegenUnsupported as e:
        return _library(problem, target, mode, out, f"not covered by codegen: {e}", floor, [], None, store, run_id)

    group_results: list[GroupResult] = []
    runner_ups: dict[str, list] = {}
    per_group_s = settings.budget_s / max(1, len(plan.groups))
    for group in plan.groups:
        # the operands a matmul group multiplies: fp8 copies under the fp8 policies (tiles, LDS, rate)
        dtype = "fp8" if group.family == "matmul" and is_fp8(settings.precision) else capture.cost.dtype
        work, sizes = _work(gen, group, dtype)
        base = schedules[group.name]
        if getattr(base, "SPLIT", 0):  # the cost model sees SPLIT rows of R/SPLIT
            work = replace(work, sizes=(("R", -(-sizes["R"] // base.SPLIT)), ("X", base.SPLIT)))
        space = make_space(group.family, target, dtype=dtype, **sizes)

        def materialize(config: Config, group=group, space=space, base=base):
            trial = dict(schedules)
            trial[group.name] = space.schedule(config, base)
            module = generate_module(problem, gen, plan, trial, target.name, target.arch)
            k = next(k for k in module.kernels if k.group == group.name)
            return module.source, _kernel_source(module.source, k, sizes, gen)

        evaluator = Evaluator(target, work, materialize, measured, str(problem.path), settings.dtype,
                              settings.precision)
        strategy = get_strategy(settings.strategy, seed=settings.seed) if settings.strategy != "exhaustive" \
            else get_strategy("exhaustive")

        def on_progress(p, name=group.name):
            progress(f"search {name}", p.done, p.total or settings.max_candidates,
                     p.best.value if p.best is not None else None)

        # the heuristic schedule is always a candidate, and so are the target's known-good ones: the search
        # can only improve on them; known-good first: where predictions tie (a compute-bound GEMM on an absent
        # target) the ranking keeps this order, so measured or documented settings win over the heuristic
        seeds = [space.config_of(base.retune(known)) for known in
                 seed_knobs(group.family, target, dtype=dtype, **sizes)]
        seeds += [space.config_of(base)]
        seeds = [c for i, c in enumerate(seeds) if c not in seeds[:i] and not space.violations(c)]
        seed_trials = evaluator(seeds) if seeds else []
        budget = Budget(max_candidates=max(0, settings.max_candidates - len(seed_trials)), max_seconds=per_group_s)
        # a learned model saved for this target (`kerntailor costmodel --save`) picks what gets timed
        rank = load_ranker(target, work) if measured else None
        result = strategy.run(space, evaluator, budget, rank=rank, progress=on_progress)
        all_trials = list(seed_trials) + [t for t in result.trials if t.config not in seeds]
        ranked = sorted((t for t in all_trials if t.ok), key=lambda t: t.value)
        ranked_schedules = [space.schedule(t.config, base) for t in ranked]
        if ranked:
            schedules[group.name] = ranked_schedules[0]
        best_eval = evaluator.seen.get(ranked[0].config) if ranked else None
        if measured and group.family == "matmul" and not is_fp8(settings.precision):
            library = _library_product_trial(group, schedules, evaluator, problem, gen, plan, target)
            if library is not None and (not ranked or library[1].seconds < ranked[0].value):
                schedules[group.name] = library[0]
                ranked = [Trial(library[1].config, True, library[1].seconds)] + ranked
                ranked_schedules = [library[0]] + ranked_schedules
                best_eval = library[1]
        label = (f"measured on {local.display_name}" if measured
                 else f"predicted for {target.name} (analytical model)")
        if getattr(schedules[group.name], "LIBRARY", 0):
            label += "; the product is the library's (torch.matmul), this kernel its epilogue"
        if measured and len(plan.groups) > 1:
            label += ", whole module with this kernel's schedule"
        facts = None
        if best_eval and best_eval.build and best_eval.build.facts:
            facts = _facts_dict(best_eval.build.facts)
        runner_ups[group.name] = ranked_schedules[1:1 + settings.runners_up]
        group_results.append(GroupResult(
            group.name, group.family, group.nodes, schedules[group.name].knobs(), ranked[0].value if ranked else None,
            label, facts, len(all_trials), sum(1 for t in all_trials if not t.ok),
            tuple((s.knobs(), t.value) for s, t in zip(ranked_schedules[1:], ranked[1:1 + settings.runners_up]))))
        if store is not None:
            _record_trials(store, run_id, group, evaluator.seen, work)

    # emit and judge; fall back to runners-up, then to the library path
    attempts = [schedules] + [dict(schedules, **{g.group: s}) for g in group_results for s in runner_ups[g.group]]
    verdict = None
    for attempt in attempts[:1 + settings.runners_up]:
        module = generate_module(problem, gen, plan, attempt, target.name, target.arch,
                                 notes=[f"Mode: {mode}. Verified by kerntailor's referee (see report.json)."])
        kernel_path.write_text(module.source)
        progress("verify", 0, 1, None)
        library_product = any(getattr(s, "LIBRARY", 0) for s in attempt.values())   # our module calls torch.matmul
        verdict = verify_candidate(problem, kernel_path, VerifySettings(time=measured, tf32=settings.precision == "tf32",
                                                                         precision=settings.precision,
                                                                         allow_library=library_product))
        if verdict.passed:
            schedules = attempt
            break
    report = _report(problem, target, mode, floor, capture, plan, group_results, verdict, started,
                     settings.precision if any(g.family == "matmul" for g in plan.groups) else None)
    if verdict is None or not verdict.passed:
        reason = f"no schedule passed the referee ({verdict.check}: {verdict.reason})" if verdict else "no candidate"
        return _library(problem, target, mode, out, reason, floor, group_results, verdict, store, run_id, report)
    medians = {t["name"]: t["median_s"] * 1e6 for t in (verdict.timing or {}).get("timings", [])}
    if measured and medians:
        cand = medians.get("candidate")
        baselines = [v for k, v in medians.items() if k != "candidate" and v]
        best_baseline = min(baselines) if baselines else None
        if cand and best_baseline and cand > best_baseline:
            compiled = medians.get("compile") is not None and medians["compile"] < medians.get("eager", float("inf"))
            return _library(problem, target, mode, out,
                            f"the generated kernel ({cand:.1f} us) is slower than the library "
                            f"({best_baseline:.1f} us, {'torch.compile' if compiled else 'eager'})", floor,
                            group_results, verdict, store, run_id, report, compiled=compiled)
    write_report(report, out)
    if store is not None:
        cid = store.record_candidate(run_id, family="module", config={g: s.knobs() for g, s in schedules.items()},
                                     source=kernel_path.read_text())
        store.record_verdict(cid, verdict)
        total = sum(g.seconds or 0 for g in group_results)
        store.record_winner(cid, report=report, median_us=total * 1e6,
                            label="measured" if measured else "predicted")
        store.finish_run(run_id, "done")
    return GenerateResult(problem.name, target.name, mode, "generated",
                          f"generated {len(plan.groups)} kernel(s); referee: passed ({verdict.mode})",
                          kernel_path, report_path, verdict, tuple(group_results), report)


def _store_library_decision(store, run_id, problem, path: Path, report: dict, mode: str) -> None:
    """The library path as this problem's winner, so a second run is served from the store. It is judged
    like any candidate (the static library-call check off: calling the reference is the point) and only
    stored if it passes. Its time is the baseline it runs (eager or torch.compile), where measured."""
    verdict = verify_candidate(problem, path, VerifySettings(library_path=True, draws=3))
    cid = store.record_candidate(run_id, family=LIBRARY, config={"reason": report.get("reason")},
                                 source=path.read_text())
    store.record_verdict(cid, verdict)
    if not verdict.passed:  # the reference disagreeing with itself: nondeterministic problem; never cached
        report["library_verdict"] = verdict.to_dict()
        return
    timings = {t["name"]: t["median_s"] * 1e6
               for t in ((report.get("verdict") or {}).get("timing") or {}).get("timings", [])}
    kept = timings.get("compile" if report.get("library") == "torch.compile" else "eager")
    store.record_winner(cid, report=report, median_us=kept,
                        label="measured" if mode == "measured" and kept is not None else "predicted")


LIBRARY_TAIL_TILES = ((64, 128, 4), (128, 128, 8), (32, 256, 4))   # (BLOCK_M, BLOCK_N, num_warps): epilogue tiles


def _library_product_trial(group, schedules, evaluator, problem, gen, plan, target):
    """Measured mode: the issue's "library GEMM + fused tail" as more candidates of a matmul group. The product
    comes from torch.matmul (cuBLAS / hipBLASLt), and the group's epilogue and row tail run in one kernel over
    its tiles (codegen/gemm.py, knob LIBRARY): tiled like the best generated schedule and like LIBRARY_TAIL_TILES
    (a tail kernel only streams the product, so smaller tiles than a GEMM's may do better). Timed as whole modules
    by the same GPU worker as the search's candidates; (schedule, Evaluation) of the fastest, or None when every
    one fails."""
    base = replace(schedules[group.name], TMA=0, PERSISTENT=0, split_k=1, LIBRARY=1)
    tiles = [base] + [replace(base, BLOCK_M=m, BLOCK_N=n, num_warps=w) for m, n, w in LIBRARY_TAIL_TILES]
    candidates = []
    for lib in (t for i, t in enumerate(tiles) if t not in tiles[:i]):
        try:
            source = generate_module(problem, gen, plan, dict(schedules, **{group.name: lib}), target.name,
                                     target.arch).source
        except CodegenUnsupported:
            continue
        candidates.append((lib, Evaluation(Config("matmul-library", tuple(sorted(lib.knobs().items()))), source)))
    evaluator.measure([e for _, e in candidates])   # not in evaluator.seen: the store's trials stay the search's
    timed = [(s, e) for s, e in candidates if e.seconds is not None and not e.error]
    return min(timed, key=lambda se: se[1].seconds) if timed else None


def _check_fp8(plan, gen, target, precision: str) -> None:
    """The fp8 policies quantize the operands of every matrix product, in GEMM kernels (codegen/gemm.py). A
    product that the plan puts elsewhere (inside attention or a fused reduction) would stay unquantized while
    the referee's reference quantizes it, and a product of an intermediate would quantize a value already
    rounded to its storage dtype (the H200 referee failed decode_attention and swiglu_mlp by that: 1.8e-2 and
    1.6e-2 against 1.6e-2): refuse up front, with what to do instead."""
    from kerntailor.ir.nodes import Matmul

    fp8_format(target.arch)   # a target without fp8 matrix units: a clear error
    anchors = {g.nodes[0] for g in plan.groups if g.family == "matmul"}
    stored = {i.name for i in gen.graph.inputs}
    for node in gen.graph.nodes:
        computed = [v.base for v in node.operands[:2] if v.base not in stored] if isinstance(node, Matmul) else []
        if computed:   # stored in the problem's dtype by the kernel before, then quantized: a second rounding
            raise KerntailorError(f"precision {precision}: the product {node.name} multiplies {computed[0]}, which "
                                  "the problem computes; fp8 covers products of inputs and parameters only (an "
                                  "intermediate is rounded to its dtype before it could be quantized); use ieee")
        if isinstance(node, Matmul) and node.name not in anchors:
            family = next((g.family for g in plan.groups if node.name in g.nodes), "?")
            raise KerntailorError(f"precision {precision}: the product {node.name} runs inside a {family} kernel, "
                                  "where fp8 is not built (only GEMM kernels quantize); use ieee")
        if not isinstance(node, Matmul) and node.family in ("attention", "conv"):
            raise KerntailorError(f"precision {precision}: {node.name} is a {node.family}, which fp8 does not "
                                  "cover (only matrix products); use ieee")


def _kernel_source(source: str, k, sizes: dict, gen=None) -> "object":
    """What the build stage compiles for one kernel. With `gen`, size arguments that are multiples of 16 at
    the traced shapes are specialized "D" as Triton's launcher does at run time, so the ISA facts (vector
    widths, LDS, matrix instructions per loop) describe the kernel that will run."""
    from kerntailor.builder import KernelSource

    constexprs = dict(k.constexprs)   # their values at the traced shapes
    options = dict(k.options)
    specialization = None
    if gen is not None:
        specialization = {name: "DS" for name, ty in k.signature if ty.startswith("*")}
        for name, expr in k.size_args:
            value = _traced_value(gen, expr)
            if isinstance(value, int) and value % 16 == 0 and value > 0:
                specialization[name] = "D"
    return KernelSource(source=source, kernel_name=k.kernel_name, signature=k.signature, constexprs=constexprs,
                        options=options, specialization=specialization)


def _traced_value(gen, expr) -> int | None:
    """A size expression's value at the traced (default) shapes; None where a dim is not an input's axis."""
    values = {}
    for dim, _ in expr.factors:
        if dim.node or dim.input >= len(gen.graph.inputs):
            return None
        shape = gen.graph.inputs[dim.input].type.shape
        if dim.axis >= len(shape):
            return None
        values[dim] = shape[dim.axis]
    try:
        value = expr.evaluate(values)
    except Exception:
        return None
    return int(value) if float(value).is_integer() else None


def _facts_dict(facts) -> dict:
    from dataclasses import asdict

    return {k: v for k, v in asdict(facts).items() if not isinstance(v, (dict, list)) or v}


def _open_store(settings: GenerateSettings, problem: ProblemSpec, target: Target):
    if not settings.use_store:
        return None, None, None, None
    from kerntailor.store import ProblemKey, Store, toolchain_fingerprint

    store = Store(settings.store_path)
    pkey = ProblemKey.of(problem, target, settings.precision)
    toolchain = toolchain_fingerprint()
    run_id = store.start_run("generate", pkey, toolchain)
    return store, run_id, pkey, toolchain


def _record_trials(store, run_id, group: FusionGroup, seen: dict, work: Work) -> None:
    for config, e in seen.items():
        cid = store.record_candidate(run_id, e.kernel, family=group.family,
                                     config=config.to_json() | {"work": work_to_json(work)}, source=e.source or None)
        if e.build is not None:
            store.record_build(cid, e.build)
        if e.seconds is not None:
            store.record_timing(cid, {"median_s": e.seconds, "label": e.label}, median_us=e.seconds * 1e6,
                                label=e.label)


def _report(problem, target, mode, floor, capture, plan, groups, verdict, started, precision="ieee") -> dict:
    return {
        "problem": problem.name, "path": str(problem.path), "dtype": problem.dtype or "as written",
        "precision": precision,
        "target": {"name": target.name, "arch": target.arch}, "mode": mode,
        "floor": {"us": floor.microseconds, "bound": floor.bound, "label": f"predicted from {floor.ceiling_source}"},
        "cost": {"flops": capture.cost.flops, "min_bytes": capture.cost.min_bytes, "plan_bytes": plan.bytes_moved},
        "kernels": [{"group": g.group, "family": g.family, "nodes": list(g.nodes), "config": g.config,
                     "seconds": g.seconds, "label": g.label, "isa": g.facts, "trials": g.trials,
                     "failed": g.failed, "runners_up": [{"config": c, "seconds": s} for c, s in g.runners_up]}
                    for g in groups],
        "verdict": verdict.to_dict() if verdict is not None else None,
        "wall_s": time.monotonic() - started,
    }


def _library(problem, target, mode, out, reason, floor, groups, verdict, store, run_id, report=None,
             compiled: bool = False):
    report = dict(report or {}) | {"status": "library", "reason": reason, "problem": problem.name,
                                   "library": "torch.compile" if compiled else "eager",
                                   "target": {"name": target.name, "arch": target.arch}, "mode": mode}
    if floor is not None and "floor" not in report:
        report["floor"] = {"us": floor.microseconds, "bound": floor.bound,
                           "label": f"predicted from {floor.ceiling_source}"}
    (out / "kernel.py").write_text(library_module(problem, reason, compiled))
    write_report(report, out)
    if store is not None:
        _store_library_decision(store, run_id, problem, out / "kernel.py", report, mode)
        store.finish_run(run_id, "library")
    return GenerateResult(problem.name, target.name, mode, "library", f"library path emitted: {reason}",
                          out / "kernel.py", out / "report.json", verdict, tuple(groups), report)


__all__ = ["GenerateResult", "GenerateSettings", "GroupResult", "KerntailorError", "generate", "replace"]
