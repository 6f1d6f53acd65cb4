"""The families codegen writes, by the plan's family name: each a schedule type, a default schedule and a
writer, plus what the later stages ask of a family: the sizes its search space takes (`work_sizes`), whether
its anchor is a matrix product (`matrix`) and whether it is compute-bound (`compute_bound`), which of the user's
precision policies its schedule takes (`precisions`), and the hooks a family with sizes of its own needs (a pool's
output sizes come from its window).

Adding a family is a writer module that defines these, one `Family` line below, and a search space
(search/families.py, `SPACE_FAMILIES`); the plan (told these names by its caller), the pipeline, the cost model
and the rest of codegen read this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen import attention, concat, conv, fused, gemm, library, pool, scan
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel
from kerntailor.codegen.schedule import Schedule
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.nodes import Graph, Node
from kerntailor.plan.fusion import FusionGroup
from kerntailor.precision import PRECISIONS

# (gen, group, schedule, host names, kernel name, arch) -> the group's kernel
Writer = Callable[[Generalized, FusionGroup, Schedule, dict, str, "str | None"], GeneratedKernel]


def numel_sizes(gen: Generalized, group: FusionGroup) -> dict[str, int]:
    """{"numel"}: the elements of the group's iteration space (a pointwise group's search sizes)."""
    return {"numel": prod(group.space)}


@dataclass(frozen=True)
class Family:
    name: str                                                   # the plan's family name (FusionGroup.family)
    schedule: type[Schedule]
    default: Callable[[Generalized, FusionGroup], Schedule]     # a schedule without search
    write: Writer
    # the sizes its search space (search/families.py, by the same name) and the cost model take, at the traced shapes
    work_sizes: Callable[[Generalized, FusionGroup], dict[str, int]] = numel_sizes
    matrix: bool = False                    # the group's first node is a matrix product (its FLOPs: the matrix rate)
    precisions: tuple[str, ...] = ()        # the user's precision policies (precision.py) its schedule's
                                            # `precision` takes; fp8 ones: it quantizes its products' operands
    library_product: bool = False           # measured mode also times the library's product with this kernel as
                                            # its epilogue (the schedule's LIBRARY knob)
    compute_bound: bool = False             # its anchor's arithmetic, not its memory traffic, bounds it: a matrix
                                            # product, attention, and the anchors without a generator that the plan
                                            # makes library groups (convolution, recurrent layers). Read by bench's
                                            # problem parts and by the fp8 check (what fp8 must cover)
    # sizes the host computes by the op's own formula (not products of input dims): host names of those dims,
    # the host lines that set one (node, the dim, its host name), and the output shape of a node that has them
    derived_names: Callable[[Generalized], dict[Dim, str]] | None = None
    derived_size_lines: Callable[[Generalized, object, Dim, str, SizeArgs], list[str]] | None = None
    output_shape: Callable[[Generalized, object], list[SizeExpr]] | None = None
    rewrite: Callable[[Generalized], Generalized] | None = None  # applied to the captured graph before codegen
    # why its writer refuses an anchor on sight, from the node alone ("" where it may take it): the plan's callers
    # make those library groups up front (codegen's `refused_anchors`), so no plan offers a group bound to fail
    refuses: Callable[[Graph, Node], str] | None = None
    # its writer computes reductions of its output in its own tiles (a row or column tail: plan/row_tail.py), so
    # the plan may put them in its group; a family that does not say so gets its reductions as groups of their own
    tails: bool = False


def _by_axis(lines: Callable[[Generalized, object, int, str, SizeArgs], list[str]]):
    """A derived-size hook that reads only the dim's axis (a pool's or a convolution's output sizes)."""
    return lambda gen, node, dim, name, sizes: lines(gen, node, dim.axis, name, sizes)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    # a concatenation's sums (codegen/concat.py) are named here: whichever fused group holds the cat
    Family("pointwise", fused.PointwiseSchedule, fused.default_schedule, fused.generate_fused,
           work_sizes=fused.pointwise_work_sizes, derived_names=concat.derived_host_names,
           derived_size_lines=concat.host_size_lines),
    Family("reduction", fused.ReductionSchedule, fused.default_schedule, fused.generate_fused,
           work_sizes=fused.reduction_work_sizes),
    Family("matmul", gemm.MatmulSchedule, gemm.default_schedule, gemm.generate_gemm, work_sizes=gemm.work_sizes,
           matrix=True, precisions=PRECISIONS, library_product=True, compute_bound=True, tails=True),
    Family("scan", scan.ScanSchedule, scan.default_schedule, scan.generate_scan, work_sizes=scan.work_sizes,
           rewrite=scan.fold_flipped_scans),
    Family("pool", pool.PoolSchedule, pool.default_schedule, pool.generate_pool, work_sizes=pool.work_sizes,
           derived_names=pool.derived_host_names, derived_size_lines=_by_axis(pool.host_size_lines),
           output_shape=pool.output_shape),
    Family("attention", attention.AttentionSchedule, attention.default_schedule, attention.generate_attention,
           work_sizes=attention.work_sizes, matrix=True, precisions=attention.PRECISIONS, compute_bound=True),
    Family("conv", conv.ConvSchedule, conv.default_schedule, conv.generate_conv, work_sizes=conv.work_sizes,
           matrix=True, precisions=conv.PRECISIONS, library_product=True, compute_bound=True,
           output_shape=library.output_shape, refuses=conv.refuses, tails=True),
    Family("library", library.LibrarySchedule, library.default_schedule, library.generate_library,
           work_sizes=library.work_sizes, derived_names=library.derived_host_names,
           derived_size_lines=_by_axis(library.host_size_lines),
           output_shape=library.output_shape, compute_bound=True),
)}


def family(name: str, what: str = "") -> Family:
    """The family called `name`; CodegenUnsupported (naming `what`) where codegen has none."""
    if name not in FAMILIES:
        raise CodegenUnsupported(f"{what + ': ' if what else ''}no code generator for the {name} family yet")
    return FAMILIES[name]
