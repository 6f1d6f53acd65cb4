"""Stage: codegen. A fusion group and a schedule → Triton source; a covered problem → kernel.py."""

from __future__ import annotations

from math import prod

from kerntailor.capture.generalize import Dim, Generalized
from kerntailor.codegen import gemm as _gemm
from kerntailor.codegen import pool as _pool
from kerntailor.codegen import scan as _scan
from kerntailor.codegen.emit import EmittedModule, emit_module, header_text
from kerntailor.codegen.fused import CodegenUnsupported, GeneratedKernel, generate_fused, split_possible
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.plan.fusion import FusionGroup, Plan
from kerntailor.problem.spec import ProblemSpec

__all__ = ["CodegenUnsupported", "EmittedModule", "GeneratedKernel", "default_knobs", "generate_kernel",
           "generate_module", "host_names", "kernel_name"]


def host_names(gen: Generalized) -> dict[Dim, str]:
    names = {d: f"d{i}" for i, d in enumerate(gen.dims)}
    # pool output sizes: always computed on the host by the op's formula (emit.py), used or not by gen
    names.update({d: n for d, n in _pool.derived_host_names(gen).items() if d not in names})
    return names


def default_knobs(gen: Generalized, group: FusionGroup) -> dict:
    """A reasonable schedule without search: persistent rows up to 16K elements, else 4K chunks."""
    if group.family == "pointwise":
        return {"XBLOCK": 1024, "num_warps": 4}
    if group.family == "scan":
        return _scan.default_knobs(gen, group)
    if group.family == "pool":
        return _pool.default_knobs(gen, group)
    if group.family == "matmul":
        return _gemm.default_knobs(gen, group)
    r = 1
    for k in group.reduce_axes:
        r *= group.space[k]
    rows = max(1, prod(group.space) // max(r, 1))
    rblock = 1 << max(0, (r - 1).bit_length())
    trailing = group.reduce_axes == tuple(range(len(group.space) - len(group.reduce_axes), len(group.space)))
    if rows == 1 and r >= 1 << 16 and split_possible(gen, group):
        return {"XBLOCK": 1, "RBLOCK": 2048, "SPLIT": 512, "persistent": False, "num_warps": 8}
    if not trailing:  # rows are strided across the reduced axes: tile many rows for coalescing
        return {"XBLOCK": 64, "RBLOCK": min(rblock, 64), "persistent": rblock <= 64, "num_warps": 8}
    if rblock <= 32768:
        return {"XBLOCK": 1, "RBLOCK": rblock, "persistent": True, "num_warps": max(1, min(16, rblock // 256))}
    return {"XBLOCK": 1, "RBLOCK": 4096, "persistent": False, "num_warps": 8}


def generate_kernel(gen: Generalized, group: FusionGroup, knobs: dict, names: dict[Dim, str],
                    kernel_name: str, arch: str | None = None) -> GeneratedKernel:
    """Triton source for one fusion group, by its family (CodegenUnsupported for families not covered).
    `arch` (the target's, when known) decides which matmul precisions are allowed."""
    if group.family in ("pointwise", "reduction"):
        return generate_fused(gen, group, knobs, names, kernel_name)
    if group.family == "scan":
        return _scan.generate_scan(gen, group, knobs, names, kernel_name)
    if group.family == "pool":
        return _pool.generate_pool(gen, group, knobs, names, kernel_name)
    if group.family == "matmul":
        return _gemm.generate_gemm(gen, group, knobs, names, kernel_name, arch)
    raise CodegenUnsupported(f"{group.name}: no code generator for the {group.family} family yet")


def kernel_name(group: FusionGroup) -> str:
    return f"{group.name}_{group.family}_kernel"


def launch_order(plan: Plan) -> list[FusionGroup]:
    """The groups in an order where each runs after every group whose outputs it reads (the plan's own
    order where it already is: a stable topological sort). Two parallel branches that merge (SwiGLU's gate
    and up projections) can leave the plan's order with a reader before its writer."""
    writer = {out: g.name for g in plan.groups for out in g.outputs}
    pending = list(plan.groups)
    done: set[str] = set()
    ordered = []
    while pending:
        ready = next((g for g in pending
                      if all(writer.get(i) in (None, g.name) or writer[i] in done for i in g.inputs)), None)
        if ready is None:
            raise CodegenUnsupported("the fusion plan has a cycle between groups")
        ordered.append(ready)
        done.add(ready.name)
        pending.remove(ready)
    return ordered


def generate_module(problem: ProblemSpec, gen: Generalized, plan: Plan, knobs: dict[str, dict],
                    target_name: str, arch: str, notes: list[str] | None = None) -> EmittedModule:
    """kernel.py for a problem whose every fusion group this codegen covers (CodegenUnsupported if not)."""
    gen = _scan.fold_flipped_scans(gen)  # flip -> scan -> flip: a reverse scan (same groups, same nodes)
    names = host_names(gen)
    kernels, sizes = [], []
    buffers = {}
    for group in launch_order(plan):
        kernel = generate_kernel(gen, group, knobs[group.name], names, kernel_name(group), arch)
        kernels.append(kernel)
        sizes.append(SizeArgs(gen, names))
        for out in group.outputs:
            node = gen.graph.node(out)
            shape = [gen.expr(("node", out, "out", k), s) for k, s in enumerate(node.out.shape)]
            if group.family == "pool":  # derived sizes: gen has no expressions for a pool's output
                shape = _pool.output_shape(gen, gen.graph.node(group.nodes[0]))
            buffers[out] = (shape, node.out.dtype)
    configs = {g.name: f"{g.family} [{', '.join(g.nodes)}] {knobs[g.name]}" for g in plan.groups}
    header = header_text(problem, target_name, arch, configs, notes or [])
    return emit_module(problem, gen, kernels, sizes, names, header, buffers)
