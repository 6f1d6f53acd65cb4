"""Stage: codegen. A fusion group and its schedule -> Triton source; a covered problem -> kernel.py.

    schedule = default_schedule(gen, group)                       # or the search's: space.schedule(config, ...)
    module = generate_module(problem, gen, plan, {g.name: schedule, ...}, "mi300x", "gfx942")
    module.source                                                 # kernel.py, standalone

Layout: `families.py` (the table of families), one writer module per family (`fused.py`: pointwise and
reductions; `gemm.py`: matmul; `conv.py`: convolution as an implicit GEMM, `conv_phases.py` its transposed form
split by output phase; `scan.py`; `pool.py`; `attention.py`; `library.py`: an anchor the host's library runs), their
shared parts (`writer.py`: lines, pointers and
cached loads; `render.py`: IR expressions as `tl.*` text; `sizes.py`: sizes as kernel arguments and host text;
`concat.py`: a concatenation's sizes, sums of its operands', computed on the host),
`schedule.py` (the Schedule base), `memory_format.py` (a library convolution's output kept channels-last: the
views of the groups after it remapped to its physical strides), `assemble.py` (signature, constexprs, grid,
scratch and options of every kernel, as a `Launch`), `emit.py` (kernel.py itself) and `constructor.py`
(ModelNew's constructor).

How to add a family (conv.py is the latest example; `library.py` runs anchors without one on the host, and the
planner gives them library groups):
1. A writer module `codegen/<family>.py` with
   - a frozen `<Family>Schedule(Schedule)`: its tiles as fields named like the constexprs they become,
     `family`, `order` and `shown` (what kernel.py's header lists), checks in `__post_init__` that raise
     ScheduleError for a value no kernel can take;
   - `default_schedule(gen, group)`: a schedule that works without search;
   - `work_sizes(gen, group) -> dict`: the sizes its search space and the cost model take (default: the
     group's numel);
   - `generate_<family>(gen, group, schedule, host_names, kernel_name, arch) -> GeneratedKernel`: a writer
     (usually a KernelWriter subclass; AnchorWriter when the group is an anchor op plus a pointwise epilogue)
     that writes the body with `self.out(...)` / `with self.out.block("for ...:"):` and finishes with
     `assemble(...)`. A group that runs no kernel of its own (a library call on the host) returns a
     GeneratedKernel with an empty source and a Launch that has only `host_prologue` lines and the
     `host_buffers` they define.
2. One `Family(...)` line in `codegen/families.py`: with `matrix=True` if its first node is a matrix product,
   `precisions` naming the user's precision policies its schedule's `precision` takes, the derived-size
   hooks if its outputs have sizes of their own, and `refuses` where its writer turns some anchors down on sight
   (an fp64 convolution): `plan_of` (what the plan's callers use) makes those library groups up front.
3. One `SpaceFamily(...)` entry in `search/families.py` (`SPACE_FAMILIES`): its space (knobs: the schedule's
   tuned fields, sized by `work_sizes`), seeds, and what a Config implies (programs, loop trips, padding, and
   for the cost model's estimates before a build: values a program holds, LDS, a split's launches and partials).
The plan (its callers pass FAMILIES' names as `generated`, through `plan_of`), the generate stage (sizes,
precision policy, fp8), emit.py, the store and the report then take it as they take every family
(tests/test_family_extension.py).

What is not a family's own and still needs an edit elsewhere for a truly new anchor op:
- capture: lowering the ATen op to an IR node (ir/nodes.py: a Node class with its `family`, `flops()`, fields;
  capture/ops_anchor.py), and its family name in plan/fusion.py's ANCHORS (which IR families start a group);
  capture/cost.py's MATRIX_FAMILIES where it is a matrix product (the roofline floor's rate), and
  capture/generalize.py's DERIVED_FAMILIES where its output sizes follow a formula (a window's);
- a library fallback for it (library.py's `library_call`), if the host should run it when its writer refuses.
The cost model (costmodel/analytical.py) reads a family's terms from its `SpaceFamily` entry, not its name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kerntailor.capture.generalize import Dim, Generalized
from kerntailor.codegen.emit import EmittedModule, emit_module, header_text
from kerntailor.codegen.errors import CodegenUnsupported, GroupUnsupported
from kerntailor.codegen.families import FAMILIES, Family, family
from kerntailor.codegen.kernel import GeneratedKernel, Launch
from kerntailor.codegen.memory_format import kept_layout, relayout
from kerntailor.codegen.schedule import Schedule, ScheduleError
from kerntailor.codegen.sizes import SizeArgs, const
from kerntailor.ir.nodes import Graph
from kerntailor.plan.fusion import ANCHORS, FusionGroup, Plan, plan_fusion
from kerntailor.problem.spec import ProblemSpec

__all__ = ["FAMILIES", "CodegenUnsupported", "EmittedModule", "Family", "GeneratedKernel", "GroupUnsupported",
           "KernelMemo", "Launch", "Schedule", "ScheduleError", "default_schedule", "generate_kernel",
           "generate_module", "host_names", "kernel_name", "plan_of", "refused_anchors", "writer_views"]


LIBRARY_CHOSEN = "the library's (timed as the alternative to the generated one)"   # why: library_families


def refused_anchors(graph: Graph, library_families: tuple[str, ...] = ()) -> dict[str, str]:
    """Anchor node -> why: the anchors whose family's writer refuses them on sight (`Family.refuses`: an fp64
    convolution), and every anchor of `library_families` (the user's or the generate stage's choice of the library
    for that family: its alternative, timed). Every caller of plan_fusion passes them as its `library`: they are
    library groups from the first plan on, never groups the generate stage must plan around."""
    out = {}
    for node in graph.nodes:
        if node.family in library_families:
            out[node.name] = f"{node.family}: {LIBRARY_CHOSEN}"
            continue
        fam = FAMILIES.get(node.family)
        reason = fam.refuses(graph, node) if fam is not None and fam.refuses is not None else ""
        if reason:
            out[node.name] = reason
    return out


def plan_of(graph: Graph, library_families: tuple[str, ...] = (), library: Mapping[str, str] | None = None) -> Plan:
    """The fusion plan codegen covers: its families generated, the anchors they refuse on sight (and those of
    `library_families`, and the anchor nodes `library` names, with why) the library's."""
    return plan_fusion(graph, FAMILIES, library=refused_anchors(graph, library_families) | dict(library or {}))


def _reduced_shape(group: FusionGroup, full: list, anchor_shape: tuple[int, ...], shape: tuple[int, ...]) -> list:
    """The host sizes of a group output of `shape`, a reduction over the group's reduce_axes of the anchor's output
    (sizes `full`), keepdim or not; GroupUnsupported for any other shape (plan/row_tail.py offers none)."""
    axes = set(group.reduce_axes)
    if shape == tuple(1 if k in axes else s for k, s in enumerate(anchor_shape)):
        return [const(1) if k in axes else e for k, e in enumerate(full)]
    if shape == tuple(s for k, s in enumerate(anchor_shape) if k not in axes):
        return [e for k, e in enumerate(full) if k not in axes]
    raise GroupUnsupported(group.name, f"an output of shape {shape} from its {anchor_shape} anchor's reductions")


def host_names(gen: Generalized) -> dict[Dim, str]:
    """Host variable names of the problem's dims (d0, d1, ...) and of the sizes families derive on the host."""
    names = {d: f"d{i}" for i, d in enumerate(gen.dims)}
    for fam in FAMILIES.values():   # derived sizes (a pool's outputs): always computed on the host, used or not
        if fam.derived_names is not None:
            names.update({d: n for d, n in fam.derived_names(gen).items() if d not in names})
    return names


def default_schedule(gen: Generalized, group: FusionGroup) -> Schedule:
    """A reasonable schedule for `group` without search (its family's heuristic); GroupUnsupported if none."""
    try:
        return family(group.family, group.name).default(gen, group)
    except (GroupUnsupported, ScheduleError):
        raise
    except CodegenUnsupported as e:
        raise GroupUnsupported(group.name, str(e), e.node) from None


def generate_kernel(gen: Generalized, group: FusionGroup, schedule: Schedule, names: dict[Dim, str],
                    kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for one fusion group under `schedule` (CodegenUnsupported for families not covered).
    `arch` (the target's, when known) decides which matmul precisions are allowed."""
    fam = family(group.family, group.name)
    if not isinstance(schedule, fam.schedule):
        raise ScheduleError(f"{group.name}: a {group.family} group takes a {fam.schedule.__name__}, "
                            f"not a {type(schedule).__name__}")
    return fam.write(gen, group, schedule, names, kernel_name, arch)


def kernel_name(group: FusionGroup) -> str:
    return f"{group.name}_{group.family}_kernel"


def writer_views(gen: Generalized, plan: Plan, schedules: Mapping[str, Schedule]) -> tuple[Generalized, Generalized]:
    """What the writers of a module's groups take: the problem after its families' rewrites (a reverse scan as flip
    -> scan -> flip), and the view of it the generated groups read (a channels-last library convolution's output
    kept so: read by its physical strides). Only the library groups' schedules are read (a missing one: default)."""
    for fam in FAMILIES.values():
        if fam.rewrite is not None:   # flip -> scan -> flip: a reverse scan (same groups, same nodes)
            gen = fam.rewrite(gen)
    kept = tuple(filter(None, (kept_layout(gen, gen.graph.node(g.nodes[0])) for g in plan.groups
                               if g.family == "library" and getattr(schedules.get(g.name), "channels_last", False))))
    return gen, relayout(gen, kept)


def layout_defaults(gen: Generalized, plan: Plan, schedules: Mapping[str, Schedule],
                    groups: Iterable[str]) -> dict[str, Schedule]:
    """default_schedule of the generated groups among `groups` as their writers read the problem under the library
    groups' `schedules` (writer_views), where a library convolution's output kept channels-last makes their
    default another (codegen/fused's memory_order: a reduction over a channels-last buffer is strided); {} where
    no output is kept so. What a library group's layout is timed with, and then searched from (generate/). Only
    the groups that read a kept output: the others' defaults are the captured graph's (a level-3 model's search
    asks this after each of its library convolutions, for every group after it)."""
    rewritten, physical = writer_views(gen, plan, schedules)
    if physical is rewritten:
        return {}
    names = set(groups)
    return {g.name: default_schedule(physical, g) for g in plan.groups
            if g.name in names and g.family != "library"
            and any(physical.graph.node(n).operands != rewritten.graph.node(n).operands for n in g.nodes)}


@dataclass
class KernelMemo:
    """The kernels written for one captured problem (`gen`), by what a group's kernel depends on: the group, its
    schedule, the target's arch and the library outputs kept channels-last (writer_views). A search writes the whole
    module for each candidate of one group; with a memo only that group's kernel is written again (15_DenseNet121's
    131 groups: 3.7 s a module, most of it rewriting the 130 kernels that did not change)."""

    gen: Generalized
    kernels: dict = field(default_factory=dict)


def generate_module(problem: ProblemSpec, gen: Generalized, plan: Plan, schedules: Mapping[str, Schedule],
                    target_name: str, arch: str, notes: list[str] | None = None,
                    memo: KernelMemo | None = None) -> EmittedModule:
    """kernel.py for a problem whose every fusion group this codegen covers (GroupUnsupported, naming the first
    group it does not, if not), each group under `schedules[group.name]`. With a `memo` of this `gen`, a kernel
    written before under the same schedule is taken from it."""
    memo = memo if memo is not None and memo.gen is gen else None
    kept = tuple(sorted(g.name for g in plan.groups if g.family == "library" and   # what writer_views keeps
                        getattr(schedules.get(g.name), "channels_last", False)))
    gen, physical = writer_views(gen, plan, schedules)
    names = host_names(gen)
    kernels, sizes = [], []
    buffers = {}
    try:
        order = plan.launch_order()
    except ValueError as e:
        raise CodegenUnsupported(str(e)) from None
    refused: list[GroupUnsupported] = []   # every group's refusal, raised together after the pass
    for group in order:
        writer_gen = gen if group.family == "library" else physical   # the library reads no kept buffer
        key = (group, schedules[group.name], arch, kept)
        try:
            kernel = memo.kernels.get(key) if memo is not None else None
            if kernel is None:
                kernel = generate_kernel(writer_gen, group, schedules[group.name], names, kernel_name(group), arch)
                if memo is not None:
                    memo.kernels[key] = kernel
            kernels.append(kernel)
        except ScheduleError:
            raise
        except GroupUnsupported as e:
            refused.append(e)
        except CodegenUnsupported as e:   # naming the group, so that the caller can plan around it
            refused.append(GroupUnsupported(group.name, str(e), e.node))
        sizes.append(SizeArgs(gen, names))
        fam = FAMILIES[group.family]
        for out in group.outputs:
            node = gen.graph.node(out)
            shape = [gen.expr(("node", out, "out", k), s) for k, s in enumerate(node.out.shape)]
            if fam.output_shape is not None:  # derived sizes: gen has no expressions for them
                # a library group's results are anchors themselves; a pool's epilogue has the pool's shape
                anchor = node if node.family in ANCHORS else gen.graph.node(group.anchor)
                shape = fam.output_shape(gen, anchor)
                if node.out.shape != anchor.out.shape:   # a row tail's value: the anchor's shape reduced
                    shape = _reduced_shape(group, shape, anchor.out.shape, node.out.shape)
            buffers[out] = (shape, node.out.dtype)
    if refused:
        refused[0].more = tuple(refused[1:])
        raise refused[0]
    configs = {g.name: f"{g.family} [{', '.join(g.nodes)}] {schedules[g.name].knobs()}" for g in plan.groups}
    header = header_text(problem, target_name, arch, configs, notes or [])
    return emit_module(problem, gen, kernels, sizes, names, header, buffers)
