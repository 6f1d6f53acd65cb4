"""optimize_model / optimize_problem: profile, generate kernels for the hottest groups, swap them in one at a
time, verify the whole model after each swap, undo any that fails, and report.

For each of the `top` hottest groups (profile's ranking: measured on a GPU, predicted elsewhere), the module swaps
first, then the graph ones:
1. scope.py: the user's module (or chain of sibling modules, or the whole model) whose forward the group is,
   exactly: a module swap; else graph.py: the group's nodes in the exported graph, which graph mode replaces by one
   kernel call (the model's forward then runs that graph, guarded); a group neither takes is skipped with both
   reasons; a library group (an anchor no generator covers) is skipped too;
2. `generate` on the group's problem file (profile wrote it; the store serves it when it is known), with a
   share of the budget; a group for which generate keeps the library path (nothing generated passed, or on the
   GPU nothing beat eager and torch.compile) is skipped: the module's own forward is that library path; except
   where the generated module it kept beside it (it passed the referee) lost only to torch.compile of the group and
   beat eager, which is what the model runs there: that module is swapped (`kept_faster_than_eager`);
3. swap.py: the module replaced by a Tailored one running the kernel; or graph.py: the model's forward set to the
   exported graph with every swapped group (module swaps included) as a kernel call; the state_dict must be
   unchanged;
4. check.py: the whole optimized model against the user's on fresh inputs (the referee's tolerance); a
   mismatch, or an error, undoes that swap, and the report says so. So every swap in the returned model passed
   a whole-model check with every swap before it in place, and the last check is of the returned model.
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from kerntailor.errors import KerntailorError
from kerntailor.generate import GenerateSettings, generate
from kerntailor.generate.pipeline import GENERATED_SLOWER
from kerntailor.optimizing.check import ModelCheck, Reference, end_to_end
from kerntailor.optimizing.cost import CostReport, count_tokens, token_costs
from kerntailor.optimizing.graph import graph_cut, install_graph
from kerntailor.optimizing.scope import Scope, group_scope
from kerntailor.optimizing.swap import install_scope, kernel_arguments, load_kernel, same_state, share_copy, undo_scope
from kerntailor.plan.coverage import LIBRARY
from kerntailor.profiling import profile_model_traced
from kerntailor.profiling.extract import owners
from kerntailor.profiling.render import module_label
from kerntailor.targets.price import price_for

log = logging.getLogger(__name__)

SWAPPED, SKIPPED, UNDONE = "swapped", "skipped", "undone"
MODULE, GRAPH = "module", "graph"
NO_GRAPH = "off (--no-graph)"


@dataclass(frozen=True)
class GroupOutcome:
    """What became of one hot group."""

    rank: int
    group: str
    family: str
    module: str              # the module swapped, else where the group's nodes came from
    share: float             # of the model's eager time (profile: measured on a GPU, else predicted)
    status: str              # swapped | skipped | undone
    reason: str              # why skipped or undone ("" when swapped)
    kernel: str              # generate's status ("generated", "cached", "library") or "" (not generated)
    verdict: str             # the kernel's referee verdict in one line, or ""
    kernel_path: str | None
    op: str | None           # the custom op the module (or the graph) now runs (swapped only)
    mode: str = ""           # how it is (or would be) swapped: module (swap.py) | graph (graph.py); "" not reached


@dataclass(frozen=True)
class OptimizeReport:
    model: str
    target: str
    profile_label: str       # the ranking's label (measured or predicted)
    groups: tuple[GroupOutcome, ...]
    check: ModelCheck | None     # the returned model's whole-model check (None: nothing was swapped)
    timing: dict                 # end_to_end(): seconds per variant, or {"note": why not measured}
    out_dir: str
    cost: CostReport             # tokens per second and $ per million tokens per variant (measured only)
    phases: dict = field(default_factory=dict)   # wall seconds: profile, each group's generate and swap (with its
                                                 # check), the reference, end to end (where optimize's time goes)

    @property
    def swapped(self) -> tuple[GroupOutcome, ...]:
        return tuple(g for g in self.groups if g.status == SWAPPED)


@dataclass(frozen=True)
class OptimizeResult:
    """The optimized model (the user's is left as it was; both hold the same parameter tensors) and the report.
    `problem_file` and `dtype`: the KernelBench file the model was built from and its cast (optimize_problem), what
    `save` rebuilds the user's class from."""

    model: object
    report: OptimizeReport
    problem_file: str | None = None
    dtype: str | None = None

    def save(self, path: str | Path, problem_file: str | Path | None = None) -> Path:
        """Write the optimized model as a Python file importing only torch, triton and the files saved beside it
        (save.py). `problem_file`: a KernelBench file whose Model is the user's class, where the model did not
        come from one (optimize_model)."""
        from kerntailor.optimizing.save import save_model

        source = problem_file or self.problem_file
        if source is None:
            raise KerntailorError("save needs a KernelBench file whose Model(*get_init_inputs()) is the user's "
                                  "model: optimize_problem records it; after optimize_model pass problem_file=")
        return save_model(self.model, path, source, self.dtype, self.report.model)


def optimize_model(model, example_inputs, *, target: str = "h200", budget: float = 120.0, top: int = 3,
                   candidates: int = 8, out_dir: str | Path | None = None, use_store: bool = True,
                   store_path: Path | None = None, time_it: bool = True, name: str | None = None,
                   price_per_hour: float | None = None, tokens_per_call: int | None = None,
                   graph: bool = True) -> OptimizeResult:
    """`model` with the module of each of the `top` hottest groups that passes every check running a generated
    kernel (module docstring); with `graph`, the groups no module holds in graph mode (graph.py). `budget` seconds
    of search are shared among the groups that are generated; `candidates` schedules at most per kernel. Kernels,
    problem files and reports go to `out_dir` (a new temporary folder if None). The cost per token (cost.py) is at
    `price_per_hour` dollars per GPU-hour (default: targets/price.py's for the target) for `tokens_per_call` tokens
    per call (default: cost.py's rule)."""
    if top < 1 or budget <= 0 or candidates < 1:
        raise KerntailorError(f"top ({top}), candidates ({candidates}) and budget ({budget}) must be positive")
    inputs = list(example_inputs)
    price = price_for(target, price_per_hour)
    tokens, rule = count_tokens(inputs, tokens_per_call)
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="kerntailor-optimize-"))
    phases, clock = {}, _Clock()
    # the ranking: measured where the model runs on a GPU (each eager op's device time), else predicted
    import torch

    on_gpu = any(isinstance(x, torch.Tensor) and x.is_cuda for x in inputs)
    traced = profile_model_traced(model, inputs, target=target, top=top, out_dir=out / "problems", name=name,
                                  measured=on_gpu)
    profile = traced.profile
    phases["profile"] = clock.lap("profile (export, plan, problem files)")
    owner = owners(traced.traced, traced.plan.groups)
    by_name = {g.name: g for g in traced.plan.groups}
    optimized = share_copy(model)
    rows = profile.groups[:top]
    scopes = [group_scope(traced.traced, by_name[r.name], owner, r.module, r.modules) for r in rows]
    cuts = [graph_cut(traced.traced, by_name[r.name], owner) if graph else NO_GRAPH for r in rows]
    generated = sum(1 for r, s, c in zip(rows, scopes, cuts)
                    if not (isinstance(s, str) and isinstance(c, str)) and r.problem_file and r.family != LIBRARY) or 1
    settings = GenerateSettings(target=target, budget_s=budget / generated, max_candidates=candidates,
                                use_store=use_store, store_path=store_path, runners_up=1,
                                html=False)   # a page per group: 1.3 s each of matplotlib (CPU, 2026-12-03)
    state = model.state_dict()
    program = traced.traced.program
    reference, check, outcomes, in_graph = None, None, {}, []
    # module swaps first (the class's forward, which graph mode falls back to, runs them; each is checked with every
    # module swap before it in place), then graph mode for the groups no module holds, in rank order each pass
    order = [i for i, s in enumerate(scopes) if not isinstance(s, str)] + \
            [i for i, s in enumerate(scopes) if isinstance(s, str)]
    for i in order:
        row, scope, cut, rank = rows[i], scopes[i], cuts[i], i + 1
        graph = isinstance(scope, str)
        base = GroupOutcome(rank, row.name, row.family, module_label(row), row.share, SKIPPED, "", "", "", None, None)
        if graph and isinstance(cut, str):
            outcomes[rank] = replace(base, reason=f"{scope}; graph mode: {cut}")
            continue
        if row.family == LIBRARY:
            outcomes[rank] = replace(base, reason="a library call (no generator for its anchor): nothing to generate")
            continue
        base = replace(base, module=f"(graph) {module_label(row)}" if graph else scope.label,
                       mode=GRAPH if graph else MODULE)
        if row.problem_file is None:
            outcomes[rank] = replace(base, reason="profile could not write it as a problem file")
            continue
        names = cut.inputs if graph else tuple(s.name for s in scope.slots)
        folder = out / f"{rank:02d}_{row.name}"
        outcome, kernel = _generate(base, row.problem_file, names, replace(settings, out_dir=folder))
        phases[f"generate {row.name}"] = clock.lap(f"generate {row.name} ({outcome.kernel or 'failed'})")
        if kernel is None:
            outcomes[rank] = outcome
            continue
        if reference is None:
            try:
                reference = Reference(model, inputs)
            except Exception as e:  # noqa: BLE001  nothing can be verified: nothing is swapped, and the report says why
                reference = f"the float64 reference of the model failed: {type(e).__name__}: {str(e)[:200]}"
            phases["reference"] = clock.lap("the whole model's float64 reference")
        if isinstance(reference, str):
            outcomes[rank] = replace(outcome, status=UNDONE, reason=f"not verifiable: {reference}")
            continue
        if graph:
            swaps = (*in_graph, (cut, kernel[0]))
            outcome, passed = _graph_swap(optimized, program, swaps, in_graph, inputs, outcome, reference, state)
            if passed:
                in_graph.append((cut, kernel[0]))
        else:
            optimized, outcome, passed = _swap(optimized, scope, kernel, outcome, reference, state)
            if passed and not isinstance(cut, str):
                in_graph.append((cut, kernel[0]))
        why = f": {outcome.reason[:300]}" if outcome.reason else ""   # in the log too: a run cut short says why
        phases[f"swap {row.name}"] = clock.lap(f"swap {row.name} and check the whole model ({outcome.status}{why})")
        check = passed or check
        outcomes[rank] = replace(outcome, op=kernel[1]) if outcome.status == SWAPPED else outcome
    outcomes = [outcomes[rank] for rank in sorted(outcomes)]
    timing = end_to_end(model, optimized, inputs) if time_it else {"note": "not measured: not asked for"}
    phases["end_to_end"] = clock.lap("end to end timing")
    if in_graph and graph_slower(timing.get("seconds", {})):   # measured once more before undoing (confirmed)
        timing = confirmed(timing, lambda: end_to_end(model, optimized, inputs))
        phases["end_to_end (confirmed)"] = clock.lap("end to end timing, measured again before undoing graph mode")
    slower = graph_slower(timing.get("seconds", {})) if in_graph else None
    if slower:   # measured: graph mode lost both ways; the model goes back to its class's forward (module swaps stay)
        install_graph(optimized, program, (), inputs)
        outcomes = [replace(o, status=UNDONE, reason=slower) if o.status == SWAPPED and o.mode == GRAPH else o
                    for o in outcomes]
        check = reference.check(optimized) if any(o.status == SWAPPED for o in outcomes) else None
        timing = end_to_end(model, optimized, inputs)
        phases["end_to_end (graph mode undone)"] = clock.lap(f"end to end timing again: {slower}")
    report = OptimizeReport(profile.model, profile.target, profile.label, tuple(outcomes), check, timing, str(out),
                            token_costs(timing, tokens, rule, price), phases)
    return OptimizeResult(optimized, report)


def graph_slower(seconds: dict) -> str | None:
    """Why graph mode is undone after the end-to-end timing, or None: it runs the profile's exported core-ATen graph,
    which ran more and smaller kernels than eager's own ops before lean.py (Llama-3.2-1B decode on the H200: 8960 us
    against eager's 4825 with one attention swapped, 2627 against torch.compile's 2882 under torch.compile); with
    lean.py the graph alone runs as eager does, but its swaps can still lose (seven generated KV-cache concatenations:
    6986 us against 4825, 2026-12-03f: lean.py's GQA rewrite skipped every SDPA reading a kernel's result, so each
    layer copied its repeated key/value heads, counted on the CPU; fixed since, graph.py gives the kernel calls' nodes
    their values), so it is kept only where the optimized model beats eager, or beats torch.compile under
    torch.compile."""
    eager, opt = seconds.get("eager"), seconds.get("optimized")
    comp, opt_comp = seconds.get("compile"), seconds.get("optimized_compile")
    if not eager or not opt or opt <= eager or (comp and opt_comp and opt_comp < comp):
        return None
    under = (f", under torch.compile {opt_comp * 1e6:.0f} us against {comp * 1e6:.0f}" if comp and opt_comp else "")
    return (f"graph mode ran the model slower end to end: {opt * 1e6:.0f} us against eager's {eager * 1e6:.0f}{under} "
            "(the exported graph with its swaps, lean.py applied, against eager's own ops)")


def confirmed(first: dict, again) -> dict:
    """The timing that decides whether graph mode is undone: `again()` (end_to_end once more: its compiles are cached
    by then), with the first measurement's seconds kept as `first_seconds`. The first end-to-end timing of a run
    comes right after torch.compile's first calls and after every group's generate; in call 4 of 2026-12-03g
    (Llama decode, eight cache concatenations in graph mode) it measured every variant high, eager 6178 us and
    compile 3639 against 4857 and 2897 a second later, and graph mode was undone on it (7984 us; the same graph
    ran 4605 us in benchmarks/graph_swaps.py). So one measurement alone never undoes graph mode."""
    timing = dict(again())
    if first.get("seconds"):
        timing["first_seconds"] = first["seconds"]
    return timing


class _Clock:
    """Seconds since the last lap, logged (kerntailor's logger: the phases of a run that is cut short)."""

    def __init__(self):
        self.last = time.perf_counter()

    def lap(self, what: str) -> float:
        now = time.perf_counter()
        seconds, self.last = round(now - self.last, 3), now
        log.info("%s: %.1f s", what, seconds)
        return seconds


KEPT = "generated (kept)"   # GroupOutcome.kernel: the module generate kept beside its library path (below)


def kept_faster_than_eager(result, verdict: dict | None) -> Path | None:
    """The generated module `generate` kept beside its library path (generated.py) where it passed the referee and
    lost on time only to torch.compile of the group, measured faster than eager: the optimized model runs every
    group it does not swap in eager, so eager is what a swap replaces (Llama decode's KV-cache concatenations on the
    H200: 69.7 us generated, 68.2 us compiled, eager's own cat and copy far slower). None otherwise."""
    if not result.lost_on_time or not verdict:
        return None
    medians = {t.get("name"): t.get("median_s") for t in (verdict.get("timing") or {}).get("timings", [])}
    cand, eager = medians.get("candidate"), medians.get("eager")
    kept = Path(result.kernel_path).parent / GENERATED_SLOWER
    if not cand or not eager or cand >= eager or not kept.is_file():
        return None
    return kept


def _generate(base: GroupOutcome, problem_file: str, names: tuple[str, ...], settings: GenerateSettings):
    """(outcome so far, (kernel module, op name) or None): generate on the group's file and load its kernel."""
    try:
        result = generate(problem_file, settings)
    except KerntailorError as e:
        return replace(base, reason=f"generate failed: {e}"), None
    verdict = result.verdict.to_dict() if result.verdict is not None else (result.report or {}).get("verdict")
    line = ("passed" if verdict.get("passed") else f"failed {verdict.get('check')}: {verdict.get('reason')}") \
        if verdict else ""
    base = replace(base, kernel=result.status, verdict=line, kernel_path=str(result.kernel_path))
    path = result.kernel_path
    if result.status == "library":
        kept = kept_faster_than_eager(result, verdict)
        if kept is None:
            return replace(base, reason=f"generate kept the library path ({result.message}): the module's own "
                                        "forward is that path"), None
        path, base = kept, replace(base, kernel=KEPT, kernel_path=str(kept))
    try:
        kernel, op = load_kernel(path)
    except Exception as e:  # noqa: BLE001  a kernel.py that does not import here: the module keeps its forward
        return replace(base, reason=f"its kernel.py does not load here: {type(e).__name__}: {str(e)[:200]}"), None
    if kernel_arguments(kernel) != names:
        return replace(base, reason=f"the kernel takes {kernel_arguments(kernel)}, the group's file {names}"), None
    return base, (kernel, op)


def _swap(optimized, scope: Scope, kernel, outcome: GroupOutcome, reference: Reference, state: dict):
    """Install the kernel at its module, check the state_dict and the whole model; undo on any failure.
    (the model, outcome, the passing ModelCheck or None)."""
    module, op = kernel
    swapped, originals = install_scope(optimized, scope, module, op)
    why = same_state(state, swapped.state_dict())
    if why:
        return (undo_scope(swapped, scope, originals),
                replace(outcome, status=UNDONE, reason=f"the state_dict would change: {why}"), None)
    check = reference.check(swapped)
    if not check.passed:
        return (undo_scope(swapped, scope, originals),
                replace(outcome, status=UNDONE, reason=f"whole-model check failed: {check.reason}"), None)
    return swapped, replace(outcome, status=SWAPPED, op=op), check


def _graph_swap(optimized, program, swaps: tuple, before: list, inputs: list, outcome: GroupOutcome,
                reference: Reference, state: dict):
    """Install the graph forward with `swaps` (graph.py), check the state_dict and the whole model; on any failure
    put back the graph of the swaps `before`. (outcome, the passing ModelCheck or None)."""
    try:
        install_graph(optimized, program, swaps, inputs)
    except KerntailorError as e:
        install_graph(optimized, program, tuple(before), inputs)
        return replace(outcome, status=UNDONE, reason=f"graph mode: {e}"), None
    why = same_state(state, optimized.state_dict())
    check = reference.check(optimized) if not why else None
    if why or not check.passed:
        install_graph(optimized, program, tuple(before), inputs)
        reason = f"the state_dict would change: {why}" if why else f"whole-model check failed: {check.reason}"
        return replace(outcome, status=UNDONE, reason=reason), None
    return replace(outcome, status=SWAPPED), check


def optimize_problem(path: str | Path, *, target: str = "h200", device: str | None = None, dtype: str | None = None,
                     **kwargs) -> OptimizeResult:
    """optimize_model on a KernelBench-format file's model and inputs (its default variant, cast to `dtype` as
    `generate --dtype` casts), built on `device` (the GPU when there is one, else the CPU)."""
    import torch

    from kerntailor.problem import load_problem

    problem = load_problem(path, dtype=dtype)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = problem.make_model("default", device=device)
    inputs = problem.make_inputs("default", device=device)
    result = optimize_model(model, inputs, target=target, name=problem.name, **kwargs)
    return replace(result, problem_file=str(Path(path).resolve()), dtype=dtype)
