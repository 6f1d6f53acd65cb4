"""`kerntailor generate`: problem + target in, the best verified kernel out, with a report.

capture → plan → per fusion group: schedule space → search (build for the target; predict with the
cost model, or time on the local GPU when it is the target) → emit kernel.py → referee (interpreter on
CPU, the GPU when present; timed against eager and torch.compile on the GPU) → store → report.

A generated module that fails the referee is never emitted as the answer: the next-best schedules are
tried, and if none passes (or, measured, none beats the better baseline) the library path is emitted
and the report says so. The user's model never gets slower.

Mixed modules: an anchor with no generator (a convolution, attention, a recurrent stack), or one its writer
refuses, is a library group (plan/coverage.py, codegen/library.py): the module calls the ATen op on the host and
the groups around it are generated and searched as usual. The referee then allows exactly those calls (static
check) and the operators they dispatch to (observed check, generate/library_ops.py); the report names each
library group and why. A problem whose every group would be a library call takes the plain library path.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from kerntailor.capture.capture import capture_generalized
from kerntailor.codegen import (
    FAMILIES,
    LIBRARY_CHOSEN,
    CodegenUnsupported,
    GroupUnsupported,
    Schedule,
    default_schedule,
    layout_defaults,
    plan_of,
    refused_anchors,
)
from kerntailor.codegen.conv_library import takes_library
from kerntailor.codegen.library import library_call
from kerntailor.costmodel.persist import work_to_json
from kerntailor.errors import CaptureError, KerntailorError
from kerntailor.generate.effort import SearchEffort
from kerntailor.generate.evaluate import close_gpu_worker
from kerntailor.generate.group_search import FirstPassLost, GroupSearch, library_product_offered, search_group
from kerntailor.generate.library_ops import dispatched_ops
from kerntailor.generate.outpaced import outpaced_convs
from kerntailor.generate.report import (
    emit_library,
    judging_folder,
    library_module,
    library_verdicts,
    place,
    write_report,
)
from kerntailor.generate.run import Progress, Run, verify_watch
from kerntailor.generate.sources import PROPOSERS, budget_shares, check_proposer, combine
from kerntailor.generate.twins import twin_keys
from kerntailor.measure.floor import floor_of
from kerntailor.measure.gpulock import LABEL_ENV
from kerntailor.plan import plan_fusion
from kerntailor.plan.coverage import LIBRARY as LIBRARY_GROUP
from kerntailor.plan.fusion import ANCHORS
from kerntailor.precision import PRECISIONS, fp8_format, is_fp8
from kerntailor.problem import load_problem
from kerntailor.targets import detect_local_target, resolve_target
from kerntailor.verify import Verdict, VerifySettings, verify_candidate
from kerntailor.verify.referee import fits_referee

log = logging.getLogger(__name__)

LIBRARY = "library"   # the store family of a library-path decision
GENERATED_SLOWER = "generated.py"   # beside a library path: the generated module that passed but lost on time
# by family, for a group with the LIBRARY knob: the operators its library product runs (observed at the
# dispatcher, CPU and problems/: torch.matmul's mm / bmm, aten.convolution as itself) and how the module writes that
# call (codegen/gemm/operands.py, codegen/conv_library.py): the only ones the referee lets such a module add
LIBRARY_PRODUCTS = {
    "matmul": (frozenset({"aten.mm.default", "aten.bmm.default"}), frozenset({"torch.matmul"})),
    "conv": (frozenset({"aten.convolution.default"}), frozenset({"torch.ops.aten.convolution.default"})),
}


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
    store_lookup: bool = True       # with use_store: serve an earlier winner (False: search, then record this one)
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
    html: bool = True               # report.html beside report.json and .md: matplotlib's roofline, ~1.3 s a run on
                                    # the CPU even for a kernel served from the store (optimize writes none)
    library_families: tuple[str, ...] = ()   # anchor families planned as library calls (their tails generated):
                                    # measured, a generated module that loses is tried again so (LIBRARY_ALTERNATIVES)
    first_pass: tuple[tuple[str, float], ...] = ()   # that second pass: the first's wall and stage seconds, for the
                                    # report ("first_pass"): the run's wall time is both passes'

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
    kept_default: str = ""          # why the search left it at its default schedule (generate/effort.py), or ""


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
    mixed: bool = False             # generated, with some groups run by the library (report["library_groups"])
    # the library path because a generated module that passed the referee was slower, measured, than the better
    # baseline (eager / torch.compile); not for a refusal, a failed referee or a prediction (report["lost_on_time"]);
    # also a generated module that lost to torch.compile alone and ships because the compiled reference failed its
    # referee (_decide)
    lost_on_time: bool = False


def generate(problem_path: str | Path, settings: GenerateSettings, progress: Progress | None = None) -> GenerateResult:
    """The best verified kernel for the problem on the target (module docstring); with a seed kernel or the
    LLM proposer, their kernels compete with the template's (generate/sources.py)."""
    if settings.proposer == "template" and settings.seed_kernel is None:
        return _generate_template(problem_path, settings, progress)
    check_proposer(settings)
    template = None
    if settings.proposer != "llm":  # the store is not consulted: other sources were asked for
        template = _generate_template(problem_path, replace(settings, use_store=False,
                                                            budget_s=budget_shares(settings)[0]), progress)
    local = detect_local_target()
    measured = local is not None and local.name == resolve_target(settings.target).name
    return combine(problem_path, settings, template, progress, measured=measured)


# Anchor families whose library op is an alternative to the generated one where the search timed no library product
# (the family's LIBRARY knob, generate/group_search.py's library_product_offered: a conv group with a reducing tail
# or an epilogue that leaves the module, so its library convolution + fused tail was a candidate of the one pass):
# measured, when the generated module loses to eager or torch.compile and a generated group of these families had
# no such candidate (a plain convolution before an anchor of another family, a pointwise epilogue another group
# reads, an fp8 policy), the problem is generated again with these anchors as library calls and their tails
# generated, and that module is judged and timed against the same baselines. (Before the knob, every conv problem
# that lost ran this second pass: 200-260 s a level-2 file on the H200 against 36-120 s for one pass.)
LIBRARY_ALTERNATIVES = ("conv",)


def _generate_template(problem_path: str | Path, settings: GenerateSettings,
                       progress: Progress | None = None) -> GenerateResult:
    """_generate_once, and where it lost on time with a generated anchor that has a library alternative the search
    did not time (LIBRARY_ALTERNATIVES), once more with that family the library's: the faster of the two against the
    same baselines."""
    with library_verdicts():   # both passes' library path is one module: judged once (report.emit_library)
        return _two_passes(problem_path, settings, progress)


def _two_passes(problem_path: str | Path, settings: GenerateSettings, progress: Progress | None) -> GenerateResult:
    run_plan: list = []
    first = _generate_once(problem_path, settings, progress, run_plan)
    families = tuple(f for f in LIBRARY_ALTERNATIVES if f not in settings.library_families and run_plan and
                     any(g.family == f and not library_product_offered(g, run_plan[0][1].graph, settings.precision)
                         for g in run_plan[0][0].groups))
    if not families or not first.lost_on_time:   # a library path, or a generated module that lost to a failed compile
        return first
    plan, gen = run_plan[0]
    if all(g.family == LIBRARY_GROUP for g in plan_of(gen.graph, settings.library_families + families).groups):
        # a plain convolution: with the library's there is nothing left to generate, and a second pass would
        # only replace this measured decision (its times, the kept generated.py) with an untimed library path
        return first
    log.info("generated %s lost on time (%s): again with the library's %s", first.problem, first.message,
             ", ".join(families))
    # recorded in the store over the first pass's decision (the same problem key), never served the first's
    spent = (("wall_s", round(float(first.report.get("wall_s") or 0.0), 3)),) + tuple(
        (f"{stage}_s", round(float(seconds), 3)) for stage, seconds in (first.report.get("stage_s") or {}).items())
    second = _generate_once(problem_path, replace(settings, library_families=settings.library_families + families,
                                                  store_lookup=False, first_pass=spent), progress, [])
    note = f"with generated {', '.join(families)}: {first.message}; with the library's: "
    return replace(second, message=note + second.message)


def _generate_once(problem_path: str | Path, settings: GenerateSettings, progress: Progress | None = None,
                   plan_out: list | None = None) -> GenerateResult:
    """Store lookup, capture, per-group search, judgement with fallback, decision (module docstring). The plan
    the run generated (after its refusals) is appended to `plan_out`, with its generalized capture: (plan, gen)."""
    run = _start(problem_path, settings, progress or (lambda *a: None))
    try:
        return _run_once(run, plan_out)
    finally:   # closed here, not whenever the Run is collected: bench's worker goes on with the next problem
        close_gpu_worker()
        if run.store is not None:
            run.store.close()


def _run_once(run: Run, plan_out: list | None) -> GenerateResult:
    cached = _served_from_store(run) if run.settings.store_lookup else None
    if cached is not None:
        return cached
    try:
        with run.timed("capture"):
            _capture(run)
    except CaptureError as e:   # an op or a size kerntailor cannot express: the user keeps the reference
        log.info("library path: not captured: %s", e)
        return _library(run, f"not captured: {e}", [], None)
    try:
        with run.timed("plan"):
            schedules = _plan_around_refusals(run)
    except CodegenUnsupported as e:
        log.info("library path: not covered by codegen: %s", e)
        return _library(run, f"not covered by codegen: {e}", [], None)
    if run.library_groups:
        if len(run.library_groups) == len(run.plan.groups):   # nothing generated: nothing gained by wrapping it
            why = "; ".join(sorted(set(run.library_groups.values())))
            chosen = all(g.nodes[0] in run.library_anchors for g in run.plan.groups)   # by rate (outpaced.py)
            return _library(run, f"{'' if chosen else 'not covered by codegen: '}every group is a library call "
                                 f"({why})", [], None)
        try:
            run.library_ops = dispatched_ops(run.gen, run.plan, _referee_device())
        except KerntailorError as e:
            return _library(run, str(e), [], None)
    run.abandon_if_lost = _abandonable(run)
    try:
        searches = _search_groups(run, schedules)
    except FirstPassLost as lost:
        return _abandoned(run, lost, plan_out)
    results = [_group_result(run, found, schedules[found.group.name]) for found in searches]
    if plan_out is not None:
        plan_out.append((run.plan, run.gen))
    close_gpu_worker()   # the measured search's worker holds the reference and inputs on the GPU: the referee's now
    with run.timed("judge"):
        verdict, judged, source = _judge(run, schedules, searches)
    if judged is not schedules:   # a runner-up passed where the best failed: the report says which one ships
        results = [_group_result(run, found, judged[found.group.name]) for found in searches]
    return _decide(run, judged, results, verdict, source)


def _search_groups(run: Run, schedules: dict[str, Schedule]) -> list[GroupSearch]:
    """Each group's search, `schedules` updated with each winner, in plan order (a library group without a layout
    to time keeps its one schedule; twin groups reuse one search). The groups are visited hottest first, and those
    left when the budget is spent keep their defaults (generate/effort.py)."""
    keys = twin_keys(run, schedules)   # twin groups (one kernel on one shape) searched once: generate/twins.py
    twins: dict[tuple, GroupSearch] = {}   # a twin key -> its search
    searchable = {g.name: g.name in run.library_groups for g in run.plan.groups
                  if g.name not in run.library_groups or _times_layouts(run, g)}
    effort = SearchEffort.of(run, keys, searchable)
    position = {g.name: i for i, g in enumerate(run.plan.groups)}
    found_by: dict[str, GroupSearch] = {}
    for group in effort.order:
        if group.name not in searchable:   # nothing to tune: the library picks its own algorithm
            found_by[group.name] = GroupSearch(group, (schedules[group.name],), (), None, (), {}, None)
            continue
        # the groups after it in plan order not visited yet: a library group's layout candidates run them at the
        # defaults of its layout (Candidates)
        later = frozenset(g.name for g in run.plan.groups[position[group.name] + 1:] if g.name not in found_by)
        key = keys.get(group.name)
        if key is not None and key in twins:
            found = replace(twins[key], group=group, trials=(), seen={}, same_as=twins[key].group.name)
            log.info("%s: the same kernel as %s: its search's ranking reused", group.name, found.same_as)
        elif (seconds := effort.allowance(group)) is None:
            why = effort.why_unsearched(group)
            log.info("%s: %s", group.name, why)
            found = GroupSearch(group, (schedules[group.name],), (), None, (), {}, None, kept_default=why)
        else:
            with run.timed("search"):
                found = search_group(run, schedules, group, later, seconds)
            if key is not None:
                twins[key] = found
        effort.visit(group)
        if found.ranked:
            schedules[group.name] = found.ranked[0]
            if group.name in run.library_groups:   # the layout it chose: the later groups' defaults under it
                schedules.update(layout_defaults(run.gen, run.plan, schedules, later))
        found_by[group.name] = found
        if run.store is not None:
            _record_trials(run, found)
    return [found_by[g.name] for g in run.plan.groups]


def _abandonable(run: Run) -> frozenset[str]:
    """The groups whose search may end this pass early (group_search.FirstPassLost): measured, an anchor of
    LIBRARY_ALTERNATIVES whose library form the search does not time (no library product offered), where the second
    pass around the library's form still generates something (_generate_template's own conditions)."""
    graph, settings = run.gen.graph, run.settings
    out = set()
    for g in run.plan.groups if run.measured else ():
        if g.family not in LIBRARY_ALTERNATIVES or g.family in settings.library_families or \
                library_product_offered(g, graph, settings.precision):
            continue
        if any(h.family != LIBRARY_GROUP for h in plan_of(graph, settings.library_families + (g.family,)).groups):
            out.add(g.name)
    return frozenset(out)


def _abandoned(run: Run, lost: FirstPassLost, plan_out: list | None) -> GenerateResult:
    """The pass ended by FirstPassLost: no outputs written (the second pass writes them), its plan handed to
    _generate_template, which generates the problem again around the library's anchor."""
    log.info("this pass is abandoned: %s", lost)
    if plan_out is not None:
        plan_out.append((run.plan, run.gen))
    if run.store is not None:
        run.store.finish_run(run.run_id, "abandoned")
    report = {"wall_s": time.monotonic() - run.started, "stage_s": dict(run.stage_s), "abandoned": str(lost)}
    return GenerateResult(run.problem.name, run.target.name, run.mode, "library", f"abandoned after its search: {lost}",
                          run.kernel_path, run.report_path, report=report, lost_on_time=True)


def _times_layouts(run: Run, group) -> bool:
    """Whether a library group's space has a knob to time (a convolution whose output can stay channels-last,
    codegen/memory_format.py): measured mode only, where the GPU says which layout cuDNN or MIOpen runs faster."""
    return run.measured and FAMILIES[group.family].work_sizes(run.gen, group).get("layouts", 1) > 1


# --- stages ------------------------------------------------------------------------------------------------

def _start(problem_path: str | Path, settings: GenerateSettings, progress: Progress) -> Run:
    target = resolve_target(settings.target)
    problem = load_problem(problem_path, dtype=settings.dtype)
    # the GPU lock's note names this job to the jobs that wait for it (bench --jobs), in every process it starts
    os.environ[LABEL_ENV] = f"{problem.name} ({problem.dtype or 'as written'})"
    fits_referee(problem)   # one line (MemoryRefused) before any work, where its referee cannot fit: verify/referee.py
    out = Path(settings.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run = Run(settings, target, problem, detect_local_target(), out, progress)
    if settings.use_store:
        from kerntailor.store import ProblemKey, Store, toolchain_fingerprint

        run.store = Store(settings.store_path)
        run.pkey = ProblemKey.of(problem, target, settings.precision)
        run.toolchain = toolchain_fingerprint()
        run.run_id = run.store.start_run("generate", run.pkey, run.toolchain)
    return run


@dataclass(frozen=True)
class FirstModule:
    """The module generate's search starts from (first_module)."""

    module: object                  # codegen's EmittedModule: kernel.py's text and its kernels
    gen: object                     # the generalized capture (kernel_source specializes sizes with it)
    library_groups: dict            # library group -> why


def first_module(problem_path: str | Path, settings: GenerateSettings) -> FirstModule:
    """kernel.py under every group's default schedule, after capture and the plan around codegen's refusals, with no
    search, referee or store (benchmarks/kernelbench_sweep.py --build cross-compiles its kernels)."""
    run = _start(problem_path, replace(settings, use_store=False), lambda *a: None)
    _capture(run)
    schedules = _plan_around_refusals(run)
    return FirstModule(run.module(schedules), run.gen, dict(run.library_groups))


def _served_from_store(run: Run) -> GenerateResult | None:
    """The winner an earlier run stored for this problem, target and toolchain, written out as it was."""
    hit = run.store.lookup_winner(run.pkey, run.toolchain) if run.store is not None else None
    if hit is None:
        return None
    smaller = _smaller_search((hit.report or {}).get("search"), run.settings)
    if smaller:   # the new winner replaces it in the store (record_winner)
        log.info("the stored result is not reused: %s; searching again", smaller)
        return None
    report = dict(hit.report or {}) | {"served_from_store": True}
    write_outputs(run, hit.candidate.source or "", report)
    run.store.finish_run(run.run_id, "cached")
    log.info("served from the store (%s)", hit.label)
    if hit.candidate.family == LIBRARY:
        return GenerateResult(run.problem.name, run.target.name, run.mode, "library",
                              f"library path, served from the store (decided by an earlier run: "
                              f"{report.get('reason', '?')})", run.kernel_path, run.report_path, report=report,
                              lost_on_time=bool(report.get("lost_on_time")))
    return GenerateResult(run.problem.name, run.target.name, run.mode, "cached",
                          f"served from the store (winner of an earlier run, {hit.label})", run.kernel_path,
                          run.report_path, report=report, mixed=bool(report.get("mixed")))


def _search_dict(settings: GenerateSettings) -> dict:
    """How large a search was asked for: stored in the report, so a later run can tell whether the stored result
    is at least as thorough as the search it asks for (`_smaller_search`)."""
    return {"budget_s": settings.budget_s, "max_candidates": settings.max_candidates, "strategy": settings.strategy,
            "seed": settings.seed}


def _smaller_search(stored: dict | None, settings: GenerateSettings) -> str:
    """Why a stored result does not answer this run (its search was smaller, or of another kind), or "" when it
    does. A stored result that does not say how it was searched is searched again."""
    if not stored:
        return "it does not record how large its search was"
    asked = _search_dict(settings)
    if stored.get("strategy") != asked["strategy"] or stored.get("seed") != asked["seed"]:
        return f"it was searched by {stored.get('strategy')} (seed {stored.get('seed')})"
    if (stored.get("budget_s") or 0) < asked["budget_s"] or (stored.get("max_candidates") or 0) < \
            asked["max_candidates"]:
        return (f"its search was {stored.get('budget_s'):g} s and {stored.get('max_candidates')} candidates, this "
                f"run asks for {asked['budget_s']:g} s and {asked['max_candidates']}")
    return ""


def _capture(run: Run) -> None:
    run.progress("capture", 0, 1, None)
    run.capture, run.gen = capture_generalized(run.problem)
    # the anchors codegen refuses on sight (and those of settings.library_families) are library groups at once
    run.plan = plan_of(run.gen.graph, run.settings.library_families)
    _plan_outpaced(run)
    if is_fp8(run.settings.precision):
        _check_fp8(run.plan, run.gen, run.target, run.settings.precision)
    run.floor = floor_of(run.capture, run.target, precision=run.settings.precision)
    if not run.measured:
        run.baselines = _predicted_baselines(run)


def _plan_outpaced(run: Run) -> None:
    """The convolutions the library outpaces by its rate alone (generate/outpaced.py: measured, fp32 ieee, TF32
    allowed): planned as library calls with their tails generated, where their group does not take the library knob
    (a group that does times only its library product: group_search.py). Sets run.outpaced, run.library_anchors."""
    graph = run.gen.graph
    run.outpaced = outpaced_convs(graph, run.target, run.settings.precision, run.measured)
    run.library_anchors = {g.anchor: run.outpaced[g.anchor].reason() for g in run.plan.groups
                           if g.family == "conv" and g.anchor in run.outpaced and not takes_library(g, graph)}
    for anchor in run.outpaced:
        log.info("%s: %s", anchor, run.outpaced[anchor].reason())
    if run.library_anchors:
        run.plan = plan_of(graph, run.settings.library_families, run.library_anchors)


def _predicted_baselines(run: Run):
    """Eager and torch.compile predicted for the target (costmodel/baselines.py); a baseline the model cannot
    trace is reported as its error, never fatal to the run."""
    from kerntailor.costmodel.baselines import predict_baselines

    try:
        return predict_baselines(run.problem, run.capture.graph, run.target)
    except Exception as e:  # noqa: BLE001  the kernel search does not depend on the baselines' estimate
        log.info("predicted baselines failed: %s: %s", type(e).__name__, e)
        return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


def _plan_around_refusals(run: Run) -> dict[str, Schedule]:
    """The default schedules of a plan codegen covers, mended where codegen refuses a group (GroupUnsupported):
    - a refusal that names a member which cannot be fused with what it reads in the group (a reduction of the
      group's own reduction, a gather of a gather) cuts the group there: that member starts a group apart from
      what it depends on (plan_fusion's `cuts`), which it then reads from memory;
    - an anchor group with a row tail (plan/row_tail.py) is planned again without the tail, its reductions their
      own kernels; an anchor group without one becomes a library group, its epilogue generated after it;
    - any other group is cut at each of its members (one kernel each, at worst); refused again, it is raised.
    Sets run.library_groups: library group -> why ("conv: no generator")."""
    # anchor node -> codegen's reason (those on sight: run.plan has them)
    refused = refused_anchors(run.gen.graph, run.settings.library_families) | run.library_anchors
    no_tails: set[str] = set()
    cuts: set[str] = set()
    while True:
        try:
            schedules = _default_schedules(run)
            run.module(schedules)
            break
        except GroupUnsupported as e:
            for refusal in (e, *e.more):   # every group codegen refused in this pass, mended at once
                _mend(run, refusal, refused, no_tails, cuts)
            run.plan = plan_fusion(run.gen.graph, FAMILIES, library=refused, no_tails=no_tails, cuts=cuts)
    run.library_groups = {}
    for g in run.plan.groups:
        if g.family == LIBRARY_GROUP:
            anchor = run.gen.graph.node(g.nodes[0])
            why = ("no generator" if anchor.family not in FAMILIES else run.library_anchors.get(anchor.name)
                   or (LIBRARY_CHOSEN if anchor.family in run.settings.library_families
                       else f"codegen refused it: {refused[anchor.name]}"))
            run.library_groups[g.name] = f"{anchor.family}: {why}"
    return schedules


def _mend(run: Run, e: GroupUnsupported, refused: dict[str, str], no_tails: set[str], cuts: set[str]) -> None:
    """What the next plan does about one refused group (_plan_around_refusals): a cut, a tail dropped or a library
    anchor added to `cuts`, `no_tails` or `refused`; the refusal raised where none is left to try."""
    group = next(g for g in run.plan.groups if g.name == e.group)
    anchor = group.anchor
    anchored = group.family in ANCHORS
    if e.node in group.nodes and e.node not in cuts and not (anchored and e.node == anchor):
        log.info("%s: codegen refused to fuse %s with what it reads (%s); the group is cut before it",
                 group.name, e.node, e)
        cuts.add(e.node)
    elif anchored and anchor not in refused:
        if group.reduce_axes and anchor not in no_tails:
            log.info("%s (%s): codegen refused its row tail (%s); planned without it", group.name, anchor, e)
            no_tails.add(anchor)
        elif not _has_library_call(run.gen.graph.node(anchor)):   # a scan: no library call to fall back on
            rest = set(group.nodes) - {anchor}
            if not rest or rest <= cuts:
                raise e
            log.info("%s (%s): codegen refused it (%s) and it has no library call; each member after it a kernel "
                     "of its own", group.name, anchor, e)
            cuts.update(rest)
        else:
            log.info("%s (%s): codegen refused it (%s); planned as a library call", group.name, anchor, e)
            refused[anchor] = str(e)
    elif not anchored and not set(group.nodes) <= cuts:
        log.info("%s: codegen refused it (%s); each of its members a kernel of its own", group.name, e)
        cuts.update(group.nodes)
    else:
        raise e


def _has_library_call(node) -> bool:
    from kerntailor.codegen.library import library_call

    try:
        library_call(node)
        return True
    except CodegenUnsupported:
        return False


def _referee_device() -> str:
    """The device the referee will run candidates on ("cuda:0", or "cpu" under the interpreter)."""
    from kerntailor.verify.referee import choose_mode

    return choose_mode(VerifySettings())[0]


def _default_schedules(run: Run) -> dict[str, Schedule]:
    """Each group's heuristic schedule; the products of a family that takes the user's precision policy
    (`Family.precisions`: a matmul any, an attention's fp32 ones ieee, tf32 and tf32x3) in that policy (not a knob
    the search may change). CodegenUnsupported for a family codegen does not cover."""
    schedules = {g.name: default_schedule(run.gen, g) for g in run.plan.groups}
    for g in run.plan.groups:
        if run.settings.precision in FAMILIES[g.family].precisions:
            schedules[g.name] = replace(schedules[g.name], precision=run.settings.precision)
    return schedules


def _group_result(run: Run, found: GroupSearch, chosen: Schedule) -> GroupResult:
    if found.group.name in run.library_groups:
        call = library_call(run.gen.graph.node(found.group.nodes[0])).dotted
        timed = "; its layout (channels_last) timed as whole modules" if found.trials else ""
        kept = f"; its layout not timed: {found.kept_default}" if found.kept_default else ""
        return GroupResult(found.group.name, found.group.family, found.group.nodes,
                           chosen.knobs() if found.trials else {}, None,
                           f"library call {call} ({run.library_groups[found.group.name]}); its time is the "
                           f"library's, not predicted{timed}{kept}", None, len(found.trials),
                           sum(1 for t in found.trials if not t.ok), (), found.kept_default)
    label = (f"measured on {run.local.display_name}" if run.measured
             else f"predicted for {run.target.name} (analytical model)")
    if chosen.library_product:
        alone = chosen.family == "matmul" and set(found.group.outputs) == set(found.group.nodes)   # codegen/gemm
        label += (f"; the product is the library's ({', '.join(sorted(LIBRARY_PRODUCTS[chosen.family][1]))}), "
                  + ("called on the host, no kernel" if alone else "this kernel its epilogue"))
    if run.measured and len(run.plan.groups) > 1:
        label += ", whole module with this kernel's schedule"
    n = run.settings.runners_up
    # the schedule that ships: the best, or the runner-up the referee passed after the best failed (_judge)
    rank = next((k for k, s in enumerate(found.ranked[:1 + n]) if s == chosen), 0)
    if found.same_as:
        label += f"; the ranking of {found.same_as}'s search (the same kernel: generate/twins.py)"
    if found.kept_default:
        label += f"; {found.kept_default}"
    if rank:
        label += f"; runner-up {rank}: the referee failed the better-ranked schedule"
    best = found.best if rank == 0 else None   # the evaluation (ISA facts) kept is the best's only
    facts = _facts_dict(best.build.facts) if best and best.build and best.build.facts else None
    others = [(s.knobs(), t) for k, (s, t) in enumerate(zip(found.ranked[:1 + n], found.seconds[:1 + n])) if k != rank]
    return GroupResult(found.group.name, found.group.family, found.group.nodes, chosen.knobs(),
                       found.seconds[rank] if rank < len(found.seconds) else None, label, facts, len(found.trials),
                       sum(1 for t in found.trials if not t.ok), tuple(others), found.kept_default)


def _judge(run: Run, schedules: dict[str, Schedule], searches: list[GroupSearch]):
    """(verdict, schedules, source) of the first module the referee passes: the best schedules, then each
    group's runners-up in turn; the last verdict, the best schedules and no source when none passes. Each
    module is judged from a temporary folder: --out gets a kernel.py only once one passed (_decide)."""
    n = run.settings.runners_up
    attempts = [schedules] + [dict(schedules, **{s.group.name: r}) for s in searches for r in s.ranked[1:1 + n]]
    verdict = None
    with judging_folder() as folder:
        candidate = Path(folder) / "kernel.py"
        for attempt in attempts[:1 + n]:
            module = run.module(attempt,
                                notes=[f"Mode: {run.mode}. Verified by kerntailor's referee (see report.json)."])
            candidate.write_text(module.source)
            run.progress("verify", 0, 1, None)
            products = frozenset(s.family for s in attempt.values() if s.library_product)   # torch.matmul, ...
            calls = frozenset(c for k in module.kernels for c in k.library_calls)
            verdict = replace(_referee(run, candidate, products, calls), candidate=str(run.kernel_path))
            if verdict.passed:
                return verdict, attempt, module.source
            log.info("the referee failed %s (%s: %s)%s",
                     ", ".join(f"{g} {s.knobs()}" for g, s in attempt.items()), verdict.check, verdict.reason,
                     "; trying the next schedule" if attempt is not attempts[-1] else "")
    return verdict, schedules, None


def _referee(run: Run, path: Path, products: frozenset[str] = frozenset(),
             library_calls: frozenset[str] = frozenset()) -> Verdict:
    """The referee on the module at `path` (timed against the baselines when measured). A module whose groups of
    the families `products` take their product from the library (the LIBRARY knob) may write that call and run
    exactly the operators it dispatches to (LIBRARY_PRODUCTS); one with library groups may write exactly their
    calls (`library_calls`) and run exactly what those dispatch to (run.library_ops, generate/library_ops.py);
    nothing else."""
    settings = run.settings
    ops, calls = set(run.library_ops if library_calls else ()), set(library_calls)
    for family in products:
        ops |= LIBRARY_PRODUCTS[family][0]
        calls |= LIBRARY_PRODUCTS[family][1]
    return verify_candidate(run.problem, path, VerifySettings(
        time=run.measured, tf32=settings.precision == "tf32", precision=settings.precision,
        allowed_ops=frozenset(ops), allowed_calls=frozenset(calls)), watch=verify_watch(run.progress))


def _decide(run: Run, schedules: dict[str, Schedule], results: list[GroupResult], verdict,
            source: str | None) -> GenerateResult:
    """The generated module (`source`, judged) if the referee passed it and, measured, it beats the better
    baseline; else the library path, with the reason."""
    report = _report(run, results, verdict)
    if verdict is None or not verdict.passed:
        reason = f"no schedule passed the referee ({verdict.check}: {verdict.reason})" if verdict else "no candidate"
        return _library(run, reason, results, verdict, report)
    medians = {t["name"]: t["median_s"] * 1e6 for t in (verdict.timing or {}).get("timings", [])}
    if run.measured and medians:
        cand = medians.get("candidate")
        baselines = [v for k, v in medians.items() if k != "candidate" and v]
        best_baseline = min(baselines) if baselines else None
        if cand and best_baseline and cand > best_baseline:
            eager = medians.get("eager") or float("inf")
            compiled = medians.get("compile") is not None and medians["compile"] < eager
            reason = (f"the generated kernel ({cand:.1f} us) is slower than the library "
                      f"({best_baseline:.1f} us, {'torch.compile' if compiled else 'eager'}); the generated module, "
                      f"which passed the referee, is kept in {GENERATED_SLOWER}")
            # lost to torch.compile alone: where the compiled reference fails its own referee, the library path is
            # eager, which the generated module beats, so it is emitted instead (level-2 92 on the H100: eager
            # 4236 us emitted beside a generated 1534 us, torch.compile raising at a variant's shapes)
            def instead(failed: str, compiled_verdict: Verdict) -> GenerateResult:
                note = (f"the generated kernel ({cand:.1f} us) is slower than torch.compile ({best_baseline:.1f} "
                        f"us), but {failed}, and faster than eager ({eager:.1f} us), the library path left")
                return _emit_generated(run, schedules, results, verdict, source, report | {
                    "reason": note, "lost_on_time": True, "compiled_library_verdict": compiled_verdict.to_dict()},
                    note)
            return _library(run, reason, results, verdict, report, compiled=compiled, slower=source,
                            lost_on_time=True, instead=instead if compiled and cand < eager else None)
    return _emit_generated(run, schedules, results, verdict, source, report)


def _emit_generated(run: Run, schedules: dict[str, Schedule], results: list[GroupResult], verdict, source: str,
                    report: dict, note: str | None = None) -> GenerateResult:
    """The judged generated module into place, stored as the winner; `note`: why it ships where it lost to a
    baseline (the compiled reference failed its referee: _decide), a loss on time that _generate_template's second
    pass may still improve on."""
    write_outputs(run, source, report)   # judged: into place
    _keep_slower(run, None)
    if run.store is not None:
        _store_winner(run, schedules, results, verdict, report)
    generated = len(run.plan.groups) - len(run.library_groups)
    what = f"generated {generated} kernel(s)" + (f" and {len(run.library_groups)} library call(s) (mixed)"
                                                 if run.library_groups else "")
    return GenerateResult(run.problem.name, run.target.name, run.mode, "generated",
                          f"{what}; referee: passed ({verdict.mode})" + (f"; {note}" if note else ""),
                          run.kernel_path, run.report_path, verdict, tuple(results), report,
                          mixed=bool(run.library_groups), lost_on_time=note is not None)


def _keep_slower(run: Run, source: str | None) -> None:
    path = run.out / GENERATED_SLOWER
    if source is not None:
        place(path, source)
    else:
        path.unlink(missing_ok=True)


def write_outputs(run: Run, kernel: str | None, report: dict | None = None) -> None:
    """The one place a run writes its outputs, each whole or not at all: kernel.py (only ever a module the
    referee passed) and the report."""
    if kernel is not None:
        place(run.kernel_path, kernel)
    if report is not None:
        write_report(report, run.out, html=run.settings.html)


def _library(run: Run, reason: str, groups, verdict, report=None, compiled: bool = False,
             slower: str | None = None, lost_on_time: bool = False, instead=None) -> GenerateResult:
    """The library path into place; `slower`, a generated module the referee passed that lost on time, is kept
    beside it (GENERATED_SLOWER) to read, profile and improve; a stale one from an earlier run goes.
    `lost_on_time`: why (GenerateResult.lost_on_time, and the report's key, which the store keeps). `instead(note)`:
    what ships where the compiled reference fails its referee (the generated module, faster than eager), given
    why and the compiled reference's verdict."""
    log.info("library path: %s", reason)
    _keep_slower(run, slower)
    report = dict(report or {}) | {"status": "library", "reason": reason, "problem": run.problem.name,
                                   "lost_on_time": lost_on_time,
                                   "path": str(Path(run.problem.path).resolve()), "search": _search_dict(run.settings),
                                   "library": "torch.compile" if compiled else "eager",
                                   "target": {"name": run.target.name, "arch": run.target.arch}, "mode": run.mode}
    report |= _first_pass_entry(run) | _outpaced_entry(run)
    if run.floor is not None and "floor" not in report:
        report["floor"] = _floor_dict(run.floor)
    if run.baselines is not None and "baselines" not in report:
        report["baselines"] = _baselines_dict(run, None)   # what runs is the reference: no kernel to compare
    watch = verify_watch(run.progress, "verify library")
    library_verdict = emit_library(run.problem, reason, run.out, compiled, watch)   # kernel.py only if it passes
    if compiled and not library_verdict.passed:
        # torch.compile of the reference failed its referee (an Inductor error at one of the variants' shapes):
        # the reference as it is, eager
        log.info("the compiled library path failed its referee (%s: %s); the eager one instead",
                 library_verdict.check, library_verdict.reason)
        report["compiled_library_verdict"] = library_verdict.to_dict()
        compiled = False
        report["library"] = "eager"
        failed = f"torch.compile of the reference failed the referee ({library_verdict.check}: " \
                 f"{library_verdict.reason})"
        if instead is not None:
            return instead(failed, library_verdict)
        report["reason"] = reason = f"{reason}; {failed}, so eager"
        library_verdict = emit_library(run.problem, reason, run.out, compiled, watch)
    if not library_verdict.passed:
        report["library_verdict"] = library_verdict.to_dict()
    write_outputs(run, None, report)
    if run.store is not None:
        _store_library_decision(run, library_module(run.problem, reason, compiled), library_verdict, report)
        run.store.finish_run(run.run_id, "library")
    message = f"library path emitted: {reason}" if library_verdict.passed else \
        (f"library path NOT emitted (the reference fails its own referee: {library_verdict.check}: "
         f"{library_verdict.reason}); {reason}")
    return GenerateResult(run.problem.name, run.target.name, run.mode, "library", message,
                          run.kernel_path, run.report_path, verdict, tuple(groups), report,
                          lost_on_time=lost_on_time)


# --- the store ----------------------------------------------------------------------------------------------

def _record_trials(run: Run, found: GroupSearch) -> None:
    for config, e in found.seen.items():
        cid = run.store.record_candidate(run.run_id, e.kernel, family=found.group.family,
                                         config=config.to_json() | {"work": work_to_json(found.work)},
                                         source=e.source or None)
        if e.build is not None:
            run.store.record_build(cid, e.build)
        if e.seconds is not None:
            run.store.record_timing(cid, {"median_s": e.seconds, "label": e.label}, median_us=e.seconds * 1e6,
                                    label=e.label)


def _store_winner(run: Run, schedules: dict[str, Schedule], results: list[GroupResult], verdict, report) -> None:
    cid = run.store.record_candidate(run.run_id, family="module", config={g: s.knobs() for g, s in schedules.items()},
                                     source=run.kernel_path.read_text())
    run.store.record_verdict(cid, verdict)
    total = sum(g.seconds or 0 for g in results)
    run.store.record_winner(cid, report=report, median_us=total * 1e6, label=run.mode)
    run.store.finish_run(run.run_id, "done")


def _store_library_decision(run: Run, source: str, verdict: Verdict, report: dict) -> None:
    """The library path as this problem's winner, so a second run is served from the store. It was judged
    like any candidate (emit_library: the static library-call check off, calling the reference is the point)
    and is only stored if it passed. Its time is the baseline it runs (eager or torch.compile), where measured."""
    cid = run.store.record_candidate(run.run_id, family=LIBRARY, config={"reason": report.get("reason")},
                                     source=source)
    run.store.record_verdict(cid, verdict)
    if not verdict.passed:  # the reference disagreeing with itself: nondeterministic problem; never cached
        return
    timings = {t["name"]: t["median_s"] * 1e6
               for t in ((report.get("verdict") or {}).get("timing") or {}).get("timings", [])}
    kept = timings.get("compile" if report.get("library") == "torch.compile" else "eager")
    run.store.record_winner(cid, report=report, median_us=kept,
                            label="measured" if run.measured and kept is not None else "predicted")


# --- the report ---------------------------------------------------------------------------------------------

def _report(run: Run, groups: list[GroupResult], verdict) -> dict:
    precision = run.settings.precision if any(FAMILIES[g.family].matrix for g in run.plan.groups) else None
    cost = run.capture.cost
    return {
        "problem": run.problem.name, "path": str(Path(run.problem.path).resolve()),
        "dtype": run.problem.dtype or "as written", "search": _search_dict(run.settings),
        "precision": precision,
        "target": {"name": run.target.name, "arch": run.target.arch}, "mode": run.mode,
        "floor": _floor_dict(run.floor),
        "cost": {"flops": cost.flops, "min_bytes": cost.min_bytes, "plan_bytes": run.plan.bytes_moved},
        "kernels": [{"group": g.group, "family": g.family, "nodes": list(g.nodes), "config": g.config,
                     "seconds": g.seconds, "label": g.label, "isa": g.facts, "trials": g.trials,
                     "failed": g.failed, "runners_up": [{"config": c, "seconds": s} for c, s in g.runners_up],
                     "searched": not g.kept_default}
                    for g in groups],
        "verdict": verdict.to_dict() if verdict is not None else None,
        "wall_s": time.monotonic() - run.started,
        "stage_s": dict(run.stage_s),
    } | _mixed_dict(run) | _baselines_entry(run, groups) | _first_pass_entry(run) | _outpaced_entry(run)


def _outpaced_entry(run: Run) -> dict:
    """{"outpaced": [...]}: the convolutions whose generated form was not timed because the library's rate wins
    (generate/outpaced.py), with both floors (predicted)."""
    return {"outpaced": [o.to_dict() for o in run.outpaced.values()]} if run.outpaced else {}


def _first_pass_entry(run: Run) -> dict:
    """{"first_pass": its wall and stage seconds} where this run is the second pass (_generate_template: the first
    lost on time with a generated convolution): the report's wall_s is this pass's alone."""
    return {"first_pass": dict(run.settings.first_pass)} if run.settings.first_pass else {}


def _baselines_entry(run: Run, groups: list[GroupResult]) -> dict:
    """{"baselines": ...} in predicted mode (with predicted speed-ups where every kernel's time is predicted);
    nothing in measured mode, where the referee timed the baselines."""
    if run.baselines is None:
        return {}
    times = [g.seconds for g in groups]
    kernel = sum(times) if times and all(t is not None for t in times) else None
    return {"baselines": _baselines_dict(run, kernel)}


def _baselines_dict(run: Run, kernel_seconds: float | None) -> dict:
    if isinstance(run.baselines, str):
        return {"label": f"predicted ({run.target.name})", "error": run.baselines}
    return run.baselines.to_dict(kernel_seconds)


def _mixed_dict(run: Run) -> dict:
    """Which groups the library runs and why, and the share of groups generated (only for a mixed module)."""
    if not run.library_groups:
        return {}
    groups = [{"group": g.name, "anchor": g.nodes[0], "call": library_call(run.gen.graph.node(g.nodes[0])).dotted,
               "reason": run.library_groups[g.name]} for g in run.plan.groups if g.name in run.library_groups]
    total = len(run.plan.groups)
    return {"mixed": True, "library_groups": groups, "library_ops": sorted(run.library_ops),
            "generated_groups": total - len(groups), "groups": total,
            "generated_share": (total - len(groups)) / total}


def _floor_dict(floor) -> dict:
    return {"us": floor.microseconds, "bound": floor.bound, "label": f"predicted from {floor.ceiling_source}",
            "bandwidth": floor.memory_label}


def _check_fp8(plan, gen, target, precision: str) -> None:
    """The fp8 policies quantize the operands of every matrix product, in GEMM kernels (codegen/gemm.py). A
    product that the plan puts elsewhere (inside attention or a fused reduction) would stay unquantized while
    the referee's reference quantizes it, and a product of an intermediate would quantize a value already
    rounded to its storage dtype (the H200 referee failed decode_attention and swiglu_mlp by that: 1.8e-2 and
    1.6e-2 against 1.6e-2): refuse up front, with what to do instead."""
    from kerntailor.ir.nodes import Matmul

    fp8_format(target.arch)   # a target without fp8 matrix units: a clear error
    anchors = {g.nodes[0] for g in plan.groups if precision in FAMILIES[g.family].precisions}
    # compute-bound anchors of families that cannot take this policy (attention; a library group's convolution)
    uncovered = {g.anchor for g in plan.groups
                 if FAMILIES[g.family].compute_bound and precision not in FAMILIES[g.family].precisions}
    stored = {i.name for i in gen.graph.inputs}
    for node in gen.graph.nodes:
        computed = [v.base for v in node.operands[:2] if v.base not in stored] if isinstance(node, Matmul) else []
        if computed:   # stored in the problem's dtype by the kernel before, then quantized: a second rounding
            raise KerntailorError(f"precision {precision}: the product {node.name} multiplies {computed[0]}, which "
                                  "the problem computes; fp8 covers products of inputs and parameters only (an "
                                  "intermediate is rounded to its dtype before it could be quantized); use ieee")
    for node in gen.graph.nodes:
        if isinstance(node, Matmul) and node.name not in anchors:
            family = next((g.family for g in plan.groups if node.name in g.nodes), "?")
            where = ("beside another product (a dual or horizontal GEMM: plan/dual.py, plan/horizontal.py)"
                     if family == "matmul" else "")
            raise KerntailorError(f"precision {precision}: the product {node.name} runs inside a {family} kernel"
                                  f"{' ' + where if where else ''}, where fp8 is not built (only a GEMM kernel's "
                                  "single product is quantized); use ieee")
        if not isinstance(node, Matmul) and node.name in uncovered:
            raise KerntailorError(f"precision {precision}: {node.name} is a {node.family}, which fp8 does not "
                                  "cover (only matrix products); use ieee")


def _facts_dict(facts) -> dict:
    from dataclasses import asdict

    return {k: v for k, v in asdict(facts).items() if not isinstance(v, (dict, list)) or v}


__all__ = ["GenerateResult", "GenerateSettings", "GroupResult", "KerntailorError", "generate", "replace"]
