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
from kerntailor.codegen import CodegenUnsupported, default_knobs, generate_module
from kerntailor.costmodel import Work
from kerntailor.costmodel.persist import load_ranker, work_to_json
from kerntailor.errors import KerntailorError
from kerntailor.generate.evaluate import Evaluation, Evaluator
from kerntailor.generate.report import emit_library, judging_folder, library_module, place, write_report
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
# what torch.matmul runs for a matmul group with the LIBRARY knob (observed at the dispatcher, CPU and
# problems/): the only operators the referee lets such a module run
LIBRARY_PRODUCT_OPS = frozenset({"aten.mm.default", "aten.bmm.default"})
SPACE_OF = {"matmul": "gemm"}   # the search space of a plan family, where the names differ


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


def _knobs(config: Config) -> dict:
    knobs = dict(config.knobs)
    if "BLOCK" in knobs:
        knobs["XBLOCK"] = knobs.pop("BLOCK")
    return knobs


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
            place(kernel_path, hit.candidate.source or "")
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
    knobs = {g.name: default_knobs(gen, g) for g in plan.groups}
    try:
        generate_module(problem, gen, plan, knobs, target.name, target.arch)
    except CodegenUnsupported as e:
        return _library(problem, target, mode, out, f"not covered by codegen: {e}", floor, [], None, store, run_id)

    group_results: list[GroupResult] = []
    evaluations: dict[str, dict[Config, Evaluation]] = {}
    per_group_s = settings.budget_s / max(1, len(plan.groups))
    for group in plan.groups:
        # the operands a matmul group multiplies: fp8 copies under the fp8 policies (tiles, LDS, rate)
        dtype = "fp8" if group.family == "matmul" and is_fp8(settings.precision) else capture.cost.dtype
        work, sizes = _work(gen, group, dtype)
        if "SPLIT" in knobs[group.name]:  # the cost model sees SPLIT rows of R/SPLIT
            split = knobs[group.name]["SPLIT"]
            work = replace(work, sizes=(("R", -(-sizes["R"] // split)), ("X", split)))
        space = make_space(SPACE_OF.get(group.family, group.family), target, dtype=dtype, **sizes)

        if group.family == "matmul":  # the user's precision policy is not a knob the search may change
            knobs[group.name]["precision"] = settings.precision
        base = dict(knobs[group.name])

        def to_knobs(config: Config, base=base) -> dict:
            k = _knobs(config)
            if "SPLIT" in base:  # a whole-tensor reduction: the search tunes the chunks, not the split
                k.update(SPLIT=base["SPLIT"], persistent=False)
            if "precision" in base:
                k["precision"] = base["precision"]
            return k

        def materialize(config: Config, group=group, to_knobs=to_knobs):
            trial = dict(knobs)
            trial[group.name] = to_knobs(config)
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
        # can only improve on them
        def as_config(given: dict) -> Config:
            return Config(space.family, tuple((k.name, given.get("XBLOCK" if k.name == "BLOCK" else k.name,
                                                                 k.values[0])) for k in space.knobs))

        seed = as_config(base)
        # known-good first: where predictions tie (a compute-bound GEMM on an absent target) the ranking
        # keeps this order, so measured or documented settings win over the portable heuristic
        seeds = [as_config(base | known) for known in
                 seed_knobs(SPACE_OF.get(group.family, group.family), target, dtype=dtype, **sizes)]
        seeds += [seed]
        seeds = [c for i, c in enumerate(seeds) if c not in seeds[:i] and not space.violations(c)]
        seed_trials = evaluator(seeds) if seeds else []
        budget = Budget(max_candidates=max(0, settings.max_candidates - len(seed_trials)), max_seconds=per_group_s)
        # a learned model saved for this target (`kerntailor costmodel --save`) picks what gets timed
        rank = load_ranker(target, work) if measured else None
        result = strategy.run(space, evaluator, budget, rank=rank, progress=on_progress)
        evaluations[group.name] = evaluator.seen
        all_trials = list(seed_trials) + [t for t in result.trials if t.config not in seeds]
        ranked = sorted((t for t in all_trials if t.ok), key=lambda t: t.value)
        if ranked:
            knobs[group.name] = to_knobs(ranked[0].config)
        best_eval = evaluator.seen.get(ranked[0].config) if ranked else None
        if measured and group.family == "matmul" and not is_fp8(settings.precision):
            library = _library_product_trial(group, knobs, ranked, to_knobs, evaluator, problem, gen, plan, target)
            if library is not None and (not ranked or library.seconds < ranked[0].value):
                knobs[group.name] = dict(library.config.knobs)
                ranked = [Trial(library.config, True, library.seconds)] + ranked
                best_eval = library
        label = (f"measured on {local.display_name}" if measured
                 else f"predicted for {target.name} (analytical model)")
        if knobs[group.name].get("LIBRARY"):
            label += "; the product is the library's (torch.matmul), this kernel its epilogue"
        if measured and len(plan.groups) > 1:
            label += ", whole module with this kernel's schedule"
        facts = None
        if best_eval and best_eval.build and best_eval.build.facts:
            facts = _facts_dict(best_eval.build.facts)
        group_results.append(GroupResult(
            group.name, group.family, group.nodes, knobs[group.name], ranked[0].value if ranked else None, label,
            facts, len(all_trials), sum(1 for t in all_trials if not t.ok),
            tuple((to_knobs(t.config), t.value) for t in ranked[1:1 + settings.runners_up])))
        if store is not None:
            _record_trials(store, run_id, group, evaluator.seen, work)

    # judge from a temporary folder, place kernel.py in --out only once it passed; fall back to runners-up,
    # then to the library path
    attempts = [knobs] + [dict(knobs, **{g.group: cfg}) for g in group_results for cfg, _ in g.runners_up]
    verdict = None
    judging = judging_folder()
    candidate = Path(judging.name) / "kernel.py"
    for attempt in attempts[:1 + settings.runners_up]:
        module = generate_module(problem, gen, plan, attempt, target.name, target.arch,
                                 notes=[f"Mode: {mode}. Verified by kerntailor's referee (see report.json)."])
        candidate.write_text(module.source)
        progress("verify", 0, 1, None)
        library_product = any(k.get("LIBRARY") for k in attempt.values())   # our module calls torch.matmul
        verdict = verify_candidate(problem, candidate, VerifySettings(time=measured, tf32=settings.precision == "tf32",
                                                                      precision=settings.precision,
                                                                      allowed_ops=LIBRARY_PRODUCT_OPS
                                                                      if library_product else frozenset()))
        verdict = replace(verdict, candidate=str(kernel_path))
        if verdict.passed:
            knobs = attempt
            break
    report = _report(problem, target, mode, floor, capture, plan, group_results, verdict, started,
                     settings.precision if any(g.family == "matmul" for g in plan.groups) else None)
    if verdict is None or not verdict.passed:
        reason = f"no schedule passed the referee ({verdict.check}: {verdict.reason})" if verdict else "no candidate"
        judging.cleanup()
        return _library(problem, target, mode, out, reason, floor, group_results, verdict, store, run_id, report)
    medians = {t["name"]: t["median_s"] * 1e6 for t in (verdict.timing or {}).get("timings", [])}
    if measured and medians:
        cand = medians.get("candidate")
        baselines = [v for k, v in medians.items() if k != "candidate" and v]
        best_baseline = min(baselines) if baselines else None
        if cand and best_baseline and cand > best_baseline:
            compiled = medians.get("compile") is not None and medians["compile"] < medians.get("eager", float("inf"))
            judging.cleanup()
            return _library(problem, target, mode, out,
                            f"the generated kernel ({cand:.1f} us) is slower than the library "
                            f"({best_baseline:.1f} us, {'torch.compile' if compiled else 'eager'})", floor,
                            group_results, verdict, store, run_id, report, compiled=compiled)
    place(kernel_path, candidate.read_text())   # judged: into place
    judging.cleanup()
    write_report(report, out)
    if store is not None:
        cid = store.record_candidate(run_id, family="module", config={g: k for g, k in knobs.items()},
                                     source=kernel_path.read_text())
        store.record_verdict(cid, verdict)
        total = sum(g.seconds or 0 for g in group_results)
        store.record_winner(cid, report=report, median_us=total * 1e6,
                            label="measured" if measured else "predicted")
        store.finish_run(run_id, "done")
    return GenerateResult(problem.name, target.name, mode, "generated",
                          f"generated {len(plan.groups)} kernel(s); referee: passed ({verdict.mode})",
                          kernel_path, report_path, verdict, tuple(group_results), report)


def _store_library_decision(store, run_id, source: str, verdict: Verdict, report: dict, mode: str) -> None:
    """The library path as this problem's winner, so a second run is served from the store. It was judged
    like any candidate (emit_library: the static library-call check off, calling the reference is the point)
    and is only stored if it passed. Its time is the baseline it runs (eager or torch.compile), where measured."""
    cid = store.record_candidate(run_id, family=LIBRARY, config={"reason": report.get("reason")}, source=source)
    store.record_verdict(cid, verdict)
    if not verdict.passed:  # the reference disagreeing with itself: nondeterministic problem; never cached
        return
    timings = {t["name"]: t["median_s"] * 1e6
               for t in ((report.get("verdict") or {}).get("timing") or {}).get("timings", [])}
    kept = timings.get("compile" if report.get("library") == "torch.compile" else "eager")
    store.record_winner(cid, report=report, median_us=kept,
                        label="measured" if mode == "measured" and kept is not None else "predicted")


LIBRARY_TAIL_TILES = ((64, 128, 4), (128, 128, 8), (32, 256, 4))   # (BLOCK_M, BLOCK_N, num_warps): epilogue tiles


def _library_product_trial(group, knobs, ranked, to_knobs, evaluator, problem, gen, plan, target):
    """Measured mode: the issue's "library GEMM + fused tail" as more candidates of a matmul group. The product
    comes from torch.matmul (cuBLAS / hipBLASLt), and the group's epilogue and row tail run in one kernel over
    its tiles (codegen/gemm.py, knob LIBRARY): tiled like the best generated schedule and like LIBRARY_TAIL_TILES
    (a tail kernel only streams the product, so smaller tiles than a GEMM's may do better). Timed as whole modules
    by the same GPU worker as the search's candidates; the fastest, or None when every one fails."""
    base = to_knobs(ranked[0].config) if ranked else dict(knobs[group.name])
    base = {k: v for k, v in base.items() if k not in ("TMA", "PERSISTENT", "split_k")} | {"LIBRARY": 1}
    tiles = [base] + [base | {"BLOCK_M": m, "BLOCK_N": n, "num_warps": w} for m, n, w in LIBRARY_TAIL_TILES]
    evals = []
    for lib in (t for i, t in enumerate(tiles) if t not in tiles[:i]):
        trial = dict(knobs)
        trial[group.name] = lib
        try:
            source = generate_module(problem, gen, plan, trial, target.name, target.arch).source
        except CodegenUnsupported:
            continue
        evals.append(Evaluation(Config("gemm-library", tuple(sorted(lib.items()))), source))
    evaluator.measure(evals)   # not in evaluator.seen: the store's trials stay schedules of the search space
    timed = [e for e in evals if e.seconds is not None and not e.error]
    return min(timed, key=lambda e: e.seconds) if timed else None


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

    constexprs = dict(k.constexprs)
    if k.persistent and "R" in sizes:
        constexprs["RBLOCK"] = 1 << max(0, (sizes["R"] - 1).bit_length())
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
    library_verdict = emit_library(problem, reason, out, compiled)   # kernel.py only if it passes
    if not library_verdict.passed:
        report["library_verdict"] = library_verdict.to_dict()
    write_report(report, out)
    if store is not None:
        _store_library_decision(store, run_id, library_module(problem, reason, compiled), library_verdict, report,
                                mode)
        store.finish_run(run_id, "library")
    message = f"library path emitted: {reason}" if library_verdict.passed else \
        (f"library path NOT emitted (the reference fails its own referee: {library_verdict.check}: "
         f"{library_verdict.reason}); {reason}")
    return GenerateResult(problem.name, target.name, mode, "library", message,
                          out / "kernel.py", out / "report.json", verdict, tuple(groups), report)


__all__ = ["GenerateResult", "GenerateSettings", "GroupResult", "KerntailorError", "generate", "replace"]
