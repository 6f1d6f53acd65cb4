"""The search stage of `generate` for one fusion group: its schedule space, the candidates to time first
(the target's known-good schedules and the heuristic), the strategy under the group's share of the budget, and
in measured mode the library's product (a GEMM's, a convolution's) with a generated tail beside them.

Each candidate is the whole module with this group under the candidate's schedule and every other group under
the schedule chosen for it so far, built for the target and predicted by the cost model, or timed on the GPU
when it is the target (generate/evaluate.py). Why a candidate was dropped (codegen, build, limits, the GPU
worker, slower than the winner) is logged: INFO under `kerntailor generate -v`, every trial under -vv.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

from kerntailor.builder.compile import interpreter_mode
from kerntailor.codegen import FAMILIES, CodegenUnsupported, Schedule, layout_defaults
from kerntailor.codegen.conv_library import takes_library
from kerntailor.costmodel.persist import load_ranker
from kerntailor.generate.evaluate import Evaluation, Evaluator
from kerntailor.generate.kernels import build_text, group_work, kernel_source
from kerntailor.generate.run import Run
from kerntailor.plan.fusion import FusionGroup
from kerntailor.precision import is_fp8
from kerntailor.search.config import Config
from kerntailor.search.families import make_space, seed_knobs
from kerntailor.search.registry import get_strategy
from kerntailor.search.space import EmptySpace, Space
from kerntailor.search.strategy import Budget, SearchResult, Trial

log = logging.getLogger(__name__)

# (BLOCK_M, BLOCK_N, num_warps): epilogue tiles of the library product (a tail kernel only streams the product)
LIBRARY_TAIL_TILES = ((64, 128, 4), (128, 128, 8), (32, 256, 4))


# a group of run.abandon_if_lost whose best module is this many times eager's time or more ends the pass
ABANDON_RATIO = 1.3


class FirstPassLost(Exception):
    """The best module of a group's search is ABANDON_RATIO x eager or slower (both measured by the search's GPU
    worker), where generate has a second pass around the library's form of that group's anchor
    (pipeline.LIBRARY_ALTERNATIVES): the rest of this pass (the other groups' searches, the referee, the timing
    against the baselines) would only confirm the loss. The other groups ran under their default schedules, so the
    ratio is an upper bound's worth of evidence, which is why the margin."""

    def __init__(self, group: str, seconds: float, eager_s: float):
        super().__init__(f"{group}: the best generated module measured {seconds * 1e6:.1f} us against eager's "
                         f"{eager_s * 1e6:.1f} us ({seconds / eager_s:.2f}x, >= {ABANDON_RATIO}x), the other groups "
                         f"under their default schedules")
        self.group, self.seconds, self.eager_s = group, seconds, eager_s


@dataclass(frozen=True)
class GroupSearch:
    """What the search found for one group: its schedules best first (the best, then the runners-up the
    referee falls back on), their times, the evaluation of the best, and the trials made."""

    group: FusionGroup
    ranked: tuple[Schedule, ...]
    seconds: tuple[float, ...]
    best: Evaluation | None
    trials: tuple[Trial, ...]
    seen: Mapping[Config, Evaluation]
    work: object                                      # costmodel.Work
    same_as: str | None = None                        # the twin group whose search this reuses (generate/twins.py)
    kept_default: str = ""                            # why it was not searched (generate/effort.py), or ""


@dataclass(frozen=True)
class Candidates:
    """Configs of one group's space -> (module source, KernelSource of the group's kernel)."""

    run: Run
    schedules: Mapping[str, Schedule]                 # every other group's schedule
    group: FusionGroup
    space: Space
    base: Schedule                                    # the group's default: what the search does not tune
    # groups not searched yet, at their defaults: a library group's layout candidate gives them the defaults of
    # that layout (codegen's layout_defaults: a reduction over a kept channels-last output is strided)
    unsearched: frozenset[str] = frozenset()

    def __call__(self, config: Config):
        schedules = dict(self.schedules, **{self.group.name: self.space.schedule(config, self.base)})
        if self.unsearched and self.group.family == "library":
            schedules.update(layout_defaults(self.run.gen, self.run.plan, schedules, self.unsearched))
        module = self.run.module(schedules)
        kernel = next(k for k in module.kernels if k.group == self.group.name)
        if not kernel.source:   # a library group (its layout knob): nothing to build, the module is timed
            return module.source, None
        return module.source, kernel_source(build_text(module, kernel), kernel, self.run.gen)


def _log_ranking(group: str, ranked: list[Trial]) -> None:
    """The winner at INFO; each schedule that was slower than it at DEBUG (-vv)."""
    if not ranked:
        return
    best = ranked[0]
    log.info("%s: fastest %s (%.2f us)", group, best.config.key(), best.value * 1e6)
    for t in ranked[1:]:
        log.debug("%s: dropped %s: slower than the winner (%.2f us vs %.2f us)", group, t.config.key(),
                  t.value * 1e6, best.value * 1e6)


def search_group(run: Run, schedules: Mapping[str, Schedule], group: FusionGroup,
                 unsearched: frozenset[str] = frozenset(), seconds: float | None = None) -> GroupSearch:
    """Search `group`'s schedules, the other groups under `schedules` (those of `unsearched` at their defaults,
    which a library group's layout candidates change: Candidates). `seconds`: the strategy's share of the budget
    (generate/effort.py; the seeds are timed whatever it is), by default an even share of budget_s."""
    settings, target = run.settings, run.target
    fam = FAMILIES[group.family]
    # the operands of a family that quantizes its products: fp8 copies under the fp8 policies (tiles, LDS, rate)
    fp8 = is_fp8(settings.precision) and settings.precision in fam.precisions
    dtype = "fp8" if fp8 else run.capture.cost.dtype
    work, sizes = group_work(run.gen, group, dtype)
    # the cost model sees the group's own rows (R, X): a candidate's SPLIT is in its config (search/families.py's
    # _row_programs, _row_split). Rewriting them to the default's SPLIT rows of R / SPLIT, as before, made every
    # candidate of a group whose default was split (23_Softmax's windowed default) X = SPLIT rows: its grid, its
    # partials and its rows in flight counted for 32 or 64 rows instead of 4096
    base = schedules[group.name]
    on_gpu = runs_on_gpu(run)
    space = make_space(group.family, target, dtype=dtype, on_gpu=on_gpu, **sizes)
    evaluator = Evaluator(target, work, Candidates(run, schedules, group, space, base, unsearched), run.measured,
                          str(run.problem.path), settings.dtype, settings.precision, group=group.name)
    if run.measured and group.family == "conv" and group.anchor in run.outpaced and \
            library_product_offered(group, run.gen.graph, settings.precision):
        found = _library_product_only(run, schedules, group, evaluator, work)
        if found is not None:
            return found
    evaluator.time_eager = run.measured and group.name in run.abandon_if_lost
    seeds = _seeds(space, base, seed_knobs(group.family, target, dtype=dtype, on_gpu=on_gpu, **sizes))
    seed_trials = evaluator(seeds) if seeds else []
    budget = Budget(max_candidates=max(0, settings.max_candidates - len(seed_trials)),
                    max_seconds=settings.budget_s / max(1, len(run.plan.groups)) if seconds is None else seconds)
    strategy = get_strategy(settings.strategy) if settings.strategy == "exhaustive" else \
        get_strategy(settings.strategy, seed=settings.seed)
    # a learned model saved for this target (`kerntailor costmodel --save`) picks what gets timed
    rank = load_ranker(target, work) if run.measured else None

    def on_progress(p):
        run.progress(f"search {group.name}", p.done, p.total or settings.max_candidates,
                     p.best.value if p.best is not None else None)

    try:
        result = strategy.run(space, evaluator, budget, rank=rank, progress=on_progress)
    except EmptySpace as e:   # no tile the space offers fits: the default schedule (codegen built it) stands,
        # built and timed (or predicted) as a trial of its own, so the report and the decision have its time
        log.info("%s: nothing to search (%s, sizes %s); its default schedule is kept", group.name, e, sizes)
        default = space.config_of(base)
        result = SearchResult(None, () if default in seeds else tuple(evaluator([default])), "empty space",
                              settings.strategy, 0.0)
    trials = tuple(seed_trials) + tuple(t for t in result.trials if t.config not in seeds)
    ranked = sorted((t for t in trials if t.ok), key=lambda t: t.value)
    log.info("%s: %d of %d schedules ok (%s)", group.name, len(ranked), len(trials), result.stopped_by)
    _log_ranking(group.name, ranked)
    found = GroupSearch(group, tuple(space.schedule(t.config, base) for t in ranked), tuple(t.value for t in ranked),
                        evaluator.seen.get(ranked[0].config) if ranked else None, trials, evaluator.seen, work)
    if run.measured and library_product_offered(group, run.gen.graph, settings.precision):
        found = _with_library_product(run, schedules, found, evaluator)
    if evaluator.time_eager:
        check_first_pass(found, evaluator.eager_s)
    return found


def check_first_pass(found: GroupSearch, eager_s: float | None) -> None:
    """FirstPassLost where `found`'s best module is ABANDON_RATIO x `eager_s` or slower (both measured)."""
    if eager_s and found.seconds and found.seconds[0] >= ABANDON_RATIO * eager_s:
        raise FirstPassLost(found.group.name, found.seconds[0], eager_s)


def runs_on_gpu(run: Run) -> bool:
    """Whether the candidates are timed and judged on the target's GPU (measured mode), never under Triton's
    interpreter: only then does the search offer GPU-only knobs (search/families.py's cooperative split, whose
    programs wait on each other; the interpreter runs one program after another and would hang on them). The
    referee runs on the GPU whenever there is one (verify's choose_mode), so a measured run's referee does too."""
    return run.measured and not interpreter_mode()


def _seeds(space: Space, base: Schedule, known: list[dict]) -> list[Config]:
    """The candidates timed first: the target's known-good schedules, then the heuristic one (the search can
    only improve on them). Known-good first: where predictions tie (a compute-bound GEMM on an absent target)
    the ranking keeps this order, so measured or documented settings win over the portable heuristic."""
    seeds = [space.config_of(base.retune(k)) for k in known] + [space.config_of(base)]
    return [c for i, c in enumerate(seeds) if c not in seeds[:i] and not space.violations(c)]


def library_product_offered(group: FusionGroup, graph, precision: str) -> bool:
    """Whether a measured search of `group` times its library product with a generated tail (_with_library_product):
    a family with the LIBRARY knob, not under an fp8 policy, and for a convolution only where the knob fuses as well
    as generate's second pass would (codegen/conv_library.py's takes_library)."""
    return (FAMILIES[group.family].library_product and not is_fp8(precision) and
            (group.family != "conv" or takes_library(group, graph)))


def _with_library_product(run: Run, schedules: Mapping[str, Schedule], found: GroupSearch,
                          evaluator: Evaluator) -> GroupSearch:
    """Measured mode: the issue's "library GEMM (convolution) + fused tail" as more candidates of a matmul or conv
    group. The product comes from the library (torch.matmul: cuBLAS / hipBLASLt; aten.convolution: cuDNN / MIOpen),
    and the group's epilogue and row or column tail run in one kernel over its tiles (the family's knob LIBRARY:
    codegen/gemm, codegen/conv_library.py): tiled like the best generated schedule and like LIBRARY_TAIL_TILES, in
    each of the family's library forms (a convolution's output NCHW and channels-last). Timed as whole modules by the
    same GPU worker as the search's candidates; first in `found` when fastest. Predicted mode offers none: no model
    here predicts the library's time."""
    best = dict(schedules, **{found.group.name: found.ranked[0]}) if found.ranked else schedules
    library = library_product_trial(run, best, found.group, evaluator)
    if library is None:
        return found
    if found.seconds and library[1].seconds >= found.seconds[0]:
        log.info("%s: library product dropped: slower than the winner (%.1f us vs %.1f us)", found.group.name,
                 library[1].seconds * 1e6, found.seconds[0] * 1e6)
        return found
    schedule, evaluation = library
    log.info("%s: the library's product with a generated tail is fastest (%.1f us)", found.group.name,
             evaluation.seconds * 1e6)
    return replace(found, ranked=(schedule,) + found.ranked, seconds=(evaluation.seconds,) + found.seconds,
                   best=evaluation)


def _library_product_only(run: Run, schedules: Mapping[str, Schedule], group: FusionGroup, evaluator: Evaluator,
                          work) -> GroupSearch | None:
    """A convolution the library outpaces by its rate (generate/outpaced.py): its library product with the generated
    tail, and no generated candidate timed; None where every library form fails (the search then runs as usual)."""
    library = library_product_trial(run, schedules, group, evaluator)
    if library is None:
        log.info("%s: the library product failed; the generated convolution is searched after all", group.name)
        return None
    schedule, evaluation = library
    log.info("%s: the library's product with a generated tail (%.1f us); %s", group.name, evaluation.seconds * 1e6,
             run.outpaced[group.anchor].reason())
    return GroupSearch(group, (schedule,), (evaluation.seconds,), evaluation, (), evaluator.seen, work)


def library_product_trial(run: Run, schedules: Mapping[str, Schedule], group: FusionGroup, evaluator: Evaluator):
    """(schedule, Evaluation) of the fastest library-product module of `group`, in each of its library forms tiled
    like `schedules[group]` and like LIBRARY_TAIL_TILES, or None when every one fails (or the family has no such
    knob). Not in evaluator.seen: the store's trials stay the search's."""
    tiles = [t for base in schedules[group.name].library_forms()
             for t in [base] + [replace(base, BLOCK_M=m, BLOCK_N=n, num_warps=w) for m, n, w in LIBRARY_TAIL_TILES]]
    candidates = []
    for lib in (t for i, t in enumerate(tiles) if t not in tiles[:i]):
        try:
            module = run.module(dict(schedules, **{group.name: lib}))
        except CodegenUnsupported as e:
            log.info("%s: library product %s dropped: codegen: %s", group.name, lib.knobs(), e)
            continue
        source = module.source
        if candidates and not next(k for k in module.kernels if k.group == group.name).source:
            break   # the products alone: library calls on the host, no kernel to tile; one form is all there is
        candidates.append((lib, Evaluation(Config(f"{group.family}-library", tuple(sorted(lib.knobs().items()))),
                                           source)))
    evaluator.measure([e for _, e in candidates])
    for _, e in candidates:
        if e.error:
            log.info("%s: library product %s dropped: %s", group.name, e.config.key(), e.error)
    timed = [(s, e) for s, e in candidates if e.seconds is not None and not e.error]
    return min(timed, key=lambda se: se[1].seconds) if timed else None
