"""Where the search's seconds go: the groups that hold the most of the problem's floor first, and once `--budget` is
spent the rest keep their default schedules.

A deep model plans tens of fusion groups (KernelBench level 3: 19_MobileNetV1 56, 22_EfficientNetB0 82,
20_MobileNetV2 106). Every group's search builds and times its seeds (the target's known-good schedules and the
heuristic) whatever its share of the budget, and measured mode times each candidate as the whole module: on an H100
at `bench --jobs 6 --candidates 3 --budget 30` (three level-3 nets at once, 2026-12-07), 19_MobileNetV1's search had
reached its 45th group after 541 s, 18x the budget, and none of the three got to the referee. Yet most of those groups
are a few microseconds each: the floors of MobileNetV1's 56 groups on an H100 are 1.2 to 19 us, half of the
problem's 356 us in its 12 largest.

So the search visits its units (a group, or twin groups sharing one search: generate/twins.py) in this order:

1. the generated units by their roofline floor on the target (all twins of a unit together), largest first: a
   group's floor is the least it can cost, so the hot groups get the budget before the launch-sized ones;
2. before each, the library groups that time a layout (a library convolution's output kept channels-last or not,
   generate/pipeline.py's _times_layouts) whose output it reads, in plan order: their choice changes the defaults
   of the generated groups that read them (codegen's layout_defaults), which must be searched after it. Timing
   every layout first spent 19_MobileNetV1's budget on its 27 library convolutions' layouts and left all 27
   BatchNorm groups at their defaults (4778 us against eager's 1146, H100, 2026-12-07);
3. the layout groups no generated group reads, last.

Each unit's strategy gets a share of what is left of the budget, in proportion to its floor among the units left.
Once the search has spent `budget_s` after its first unit (always searched: in measured mode it also pays the
module's one-off compile, SearchEffort.visit), the units not yet visited keep their default schedule: built by
codegen and judged by the referee with the whole module, never timed alone; the report says so per group. A
problem of a few groups whose seeds fit the budget is searched as before, all of it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from kerntailor.generate.kernels import group_work
from kerntailor.plan.fusion import FusionGroup
from kerntailor.targets.roofline import roofline_floor


def group_floor_s(run, group: FusionGroup) -> float:
    """The roofline floor of one generated group on the run's target: its Work (FLOPs, compulsory bytes) at the
    family's rate; 0.0 where the family cannot say (the group then goes last)."""
    try:
        work, _ = group_work(run.gen, group, run.capture.cost.dtype)
        return roofline_floor(run.target, flops=work.flops, vector_flops=work.vector_flops,
                              min_bytes=work.min_bytes, dtype=work.dtype, matrix=work.matrix).seconds
    except Exception:  # noqa: BLE001  an ordering hint only: a group it cannot cost is searched last, never lost
        return 0.0


@dataclass
class SearchEffort:
    """The order in which `_search_groups` visits the plan's groups and the clock that stops it."""

    order: tuple[FusionGroup, ...]          # generated units hottest first, each after the layouts it reads
    floor_s: Mapping[str, float]            # unit floor (a twin unit: the sum of its groups'), by group name
    budget_s: float
    units: Mapping[str, object]             # group name -> its unit (twin key, or the group's own name)
    started: float = field(default_factory=lambda: time.monotonic())
    visited_units: set = field(default_factory=set)
    searched: int = 0

    @classmethod
    def of(cls, run, keys: Mapping[str, tuple], searchable: Mapping[str, bool]) -> SearchEffort:
        """`keys`: twin keys (generate/twins.py); `searchable`: group name -> whether it has a search at all (a
        library group without a layout to time has none) and whether it is a layout group (True) or generated
        (False) for those that do."""
        groups = run.plan.groups
        units = {g.name: keys.get(g.name, g.name) for g in groups}
        per_unit: dict[object, float] = {}
        for g in groups:
            if g.name in searchable:
                per_unit[units[g.name]] = per_unit.get(units[g.name], 0.0) + group_floor_s(run, g)
        layouts = [g for g in groups if searchable.get(g.name)]
        plan_index = {g.name: i for i, g in enumerate(groups)}
        generated = sorted((g for g in groups if g.name in searchable and not searchable[g.name]),
                           key=lambda g: (-per_unit[units[g.name]], plan_index[g.name]))
        rest = [g for g in groups if g.name not in searchable]
        floor_s = {g.name: per_unit.get(units[g.name], 0.0) for g in groups}
        order: list[FusionGroup] = []
        for g in generated:   # each layout group just before the first generated group that reads its output
            reads = set(g.inputs)
            order += [lay for lay in layouts if lay not in order and reads & set(lay.outputs)]
            order.append(g)
        order += [lay for lay in layouts if lay not in order]
        return cls(tuple(order + rest), floor_s, float(run.settings.budget_s), units)

    @property
    def spent_s(self) -> float:
        return time.monotonic() - self.started

    def allowance(self, group: FusionGroup) -> float | None:
        """Seconds for this group's search, or None where the budget is spent and it keeps its default: its
        floor's share, among the units not visited yet, of what is left of the budget."""
        first = self.searched == 0
        left = self.budget_s - self.spent_s
        if left <= 0 and not first:
            return None
        remaining = {self.units[name]: s for name, s in self.floor_s.items() if self.units[name] not in
                     self.visited_units}
        total = sum(remaining.values())
        share = self.floor_s[group.name] / total if total > 0 else 1.0 / max(1, len(remaining))
        return max(0.0, left) * share

    def visit(self, group: FusionGroup) -> None:
        """The group's unit was searched (or served by its twin's search). The clock starts after the first: in
        measured mode the first candidate's module compiles every kernel of the plan in the GPU worker (Triton's JIT,
        ~150 s for 19_MobileNetV1's 56 kernels beside two other jobs on the H100), a one-off cost that is not search."""
        self.visited_units.add(self.units[group.name])
        self.searched += 1
        if self.searched == 1:
            self.started = time.monotonic()

    def why_unsearched(self, group: FusionGroup) -> str:
        total = sum({self.units[n]: s for n, s in self.floor_s.items()}.values())
        share = self.floor_s[group.name] / total if total > 0 else 0.0
        return (f"not searched: the search's budget ({self.budget_s:g} s) was spent on groups with more of the "
                f"problem's floor ({share:.1%} of it here); its default schedule, judged with the module")


__all__ = ["SearchEffort", "group_floor_s"]
