"""Predicted profile: where a model's eager time goes, per fusion group, and what each group could gain.

Without the target GPU every number is predicted (baselines.py's model, labelled `predicted (<target>, <model>)`):

- eager time: eager PyTorch traced on meta tensors, one kernel per ATen op dispatched (eager_trace.py), each op
  at baselines.py's kernel cost. The whole model's predicted eager time is their sum.
- a group's eager time: the eager ops are attributed to IR nodes through the user's modules. Each eager op
  carries the innermost module that dispatched it, each IR node the module of the FX node it was lowered from
  (capture/provenance.py). Within a module, eager's library ops (matrix products, convolutions, attention,
  recurrent calls) go to its IR nodes of those families and its other ops to its other nodes (to all its nodes
  where it has none of the kind), each op split over them in proportion to each node's cost as a kernel of
  its own (a softmax op's time over the five nodes it decomposes into; a convolution with its bias, one
  cuDNN call in eager, wholly to the convolution node). An op whose module has no IR node goes to the nearest
  enclosing module that has some, then to the modules inside it; what is still left (none in the models
  tried) is reported as unattributed. So the groups' eager times and the unattributed rest sum to the whole
  model's: shares sum to 1. This is an apportionment, not a measurement: a group's eager time can come out
  below its floor where it is split off from one eager op (its gain is then negative, and shown so).
- a group's floor: its roofline floor on the target at its compulsory bytes (outside inputs read once, outputs
  that others read written once) and its FLOPs, no launch cost.
- roofline share: the group's floor over its eager time, the share of the roofline rate its eager ops reach.
- gain (Amdahl): what the whole model saves if this group alone ran at its floor, as a share of the model's
  eager time, and the whole model's speed-up T / (T - eager_g + floor_g).

Measured mode (measured.py): the same ops, each with its device time from torch.profiler on the GPU here
(`profile --measured`, the default where a GPU is present); the apportionment to groups and the floors as above.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from kerntailor.capture.cost import MATRIX_FAMILIES
from kerntailor.capture.provenance import TracedCapture
from kerntailor.costmodel.baselines import MODEL, kernel_estimate, predict_eager
from kerntailor.costmodel.eager_trace import EagerOp
from kerntailor.plan import Plan
from kerntailor.profiling.measured import MeasuredEager
from kerntailor.targets import Target, roofline_floor

UNKNOWN = "unknown"


@dataclass(frozen=True)
class GroupProfile:
    """One fusion group of the model, its predicted costs and what it could gain."""

    name: str
    family: str
    module: str                   # the innermost module holding all its nodes ("" the model), "unknown"
    modules: tuple[str, ...]      # every module its nodes came from
    nodes: tuple[str, ...]
    ops: tuple[str, ...]          # the ATen ops its nodes were lowered from (distinct, in order)
    flops: int
    bytes: int                    # compulsory bytes read and written
    floor_us: float
    bound: str                    # "memory" | "compute"
    eager_us: float               # predicted eager time of the ops it covers
    share: float                  # of the whole model's predicted eager time
    gain_share: float             # Amdahl: the model's eager time saved if this group ran at its floor, as a share
    amdahl_speedup: float         # the whole model's speed-up if this group ran at its floor
    roofline_share: float         # floor over eager time: the share of the roofline rate its eager ops reach
    problem_file: str | None = None


@dataclass(frozen=True)
class ModelProfile:
    """A model's predicted profile on one target: its groups, hottest first."""

    model: str
    path: str
    target: str
    dtype: str
    mode: str                     # "predicted" | "measured" (eager ops timed by torch.profiler: measured.py)
    label: str                    # "predicted (h200, baseline model v1)": beside every number
    eager_us: float               # the whole model, predicted
    eager_kernels: int
    floor_us: float               # the sum of the groups' floors
    unattributed_us: float
    groups: tuple[GroupProfile, ...]


def profile_groups(name: str, path: str, dtype: str, traced: TracedCapture, plan: Plan, eager: tuple[EagerOp, ...],
                   target: Target, measured: MeasuredEager | None = None) -> ModelProfile:
    """The profile of a captured model (module docstring): predicted, or with each eager op's measured time
    (`measured`, profiling/measured.py: its ops replace `eager`)."""
    graph = traced.capture.graph
    consumers = graph.consumers()
    if measured is not None:
        eager = measured.ops
    estimate = predict_eager(eager, target)
    if measured is not None:
        estimate = replace(estimate, kernels=tuple(replace(k, seconds=s)
                                                   for k, s in zip(estimate.kernels, measured.seconds)))
    total = estimate.seconds
    node_eager, unattributed = _node_eager(traced, eager, estimate, graph, target, consumers)
    rows = []
    origin = {n.name: n.origin for n in graph.nodes}
    recomputing = plan.recomputing()
    for g in plan.groups:
        k = kernel_estimate(graph, g.nodes, target, consumers=consumers, recomputing=recomputing)
        floor = _floor(k, target)
        e = sum(node_eager.get(n, 0.0) for n in g.nodes if n not in g.recomputed)   # a node's eager time: its owner's
        rows.append(_row(g, traced, origin, k, floor, e, total))
    rows.sort(key=lambda r: r.eager_us, reverse=True)
    if measured is None:
        mode, label = "predicted", f"predicted ({target.name}, {MODEL})"
    else:   # the floors stay the target's roofline: a bound computed, never measured
        clock = "torch.profiler device time" if measured.clock == "device" else "torch.profiler host time, no GPU"
        mode, label = "measured", (f"eager measured ({measured.device}, {clock}, mean of {measured.steps} "
                                   f"forwards); floors predicted ({target.name} roofline)")
    return ModelProfile(name, path, target.name, dtype, mode, label, total * 1e6, len(estimate.kernels),
                        sum(r.floor_us for r in rows), unattributed * 1e6, tuple(rows))


def _floor(k, target: Target):
    if k.flops_matrix:
        return roofline_floor(target, flops=k.flops_matrix, vector_flops=k.flops_vector,
                              min_bytes=k.bytes_read + k.bytes_written, dtype=_rate(k.dtype), matrix=True,
                              read_bytes=k.bytes_read)
    return roofline_floor(target, flops=k.flops_vector, min_bytes=k.bytes_read + k.bytes_written,
                          dtype=_rate(k.dtype), matrix=False, read_bytes=k.bytes_read)


def _rate(dtype: str) -> str:
    return dtype if dtype in ("fp64", "fp32", "bf16", "fp16") else "fp32"


def _row(g, traced: TracedCapture, origin: dict[str, str], k, floor, eager_s: float, total: float) -> GroupProfile:
    modules = tuple(dict.fromkeys(traced.module_of.get(n) for n in g.nodes))
    known = [m for m in modules if m is not None]
    module = _common_prefix(known) if known and len(known) == len(modules) else UNKNOWN
    ops = tuple(dict.fromkeys(origin[n] for n in g.nodes))
    saved = eager_s - floor.seconds
    return GroupProfile(g.name, g.family, module, tuple(m if m is not None else UNKNOWN for m in modules), g.nodes,
                        ops, k.flops_matrix + k.flops_vector, k.bytes_read + k.bytes_written, floor.seconds * 1e6,
                        floor.bound, eager_s * 1e6, eager_s / total if total else 0.0,
                        saved / total if total else 0.0, total / (total - saved) if total - saved > 0 else float("inf"),
                        floor.seconds / eager_s if eager_s > 0 else float("nan"))


def _common_prefix(paths: list[str]) -> str:
    parts = [p.split(".") if p else [] for p in paths]
    common = []
    for level in zip(*parts):
        if len(set(level)) > 1:
            break
        common.append(level[0])
    return ".".join(common)


def _node_eager(traced: TracedCapture, eager: tuple[EagerOp, ...], estimate, graph, target: Target,
                consumers) -> tuple[dict[str, float], float]:
    """Per IR node, its part of the eager time (seconds), and the eager time no node took (module docstring)."""
    by_module: dict[str, list[str]] = defaultdict(list)
    for n in graph.nodes:
        m = traced.module_of.get(n.name)
        if m is not None:
            by_module[m].append(n.name)
    weight = {n.name: kernel_estimate(graph, (n.name,), target, consumers=consumers).seconds for n in graph.nodes}
    family = {n.name: n.family for n in graph.nodes}
    out: dict[str, float] = defaultdict(float)
    unattributed = 0.0
    for op, kernel in zip(eager, estimate.kernels):
        nodes = _nodes_for(op.module, by_module)
        same_kind = [n for n in nodes if (family[n] in MATRIX_FAMILIES) == op.matrix]
        nodes = same_kind or nodes
        if not nodes:
            unattributed += kernel.seconds
            continue
        w = sum(weight[n] for n in nodes)
        for n in nodes:
            out[n] += kernel.seconds * weight[n] / w
    return out, unattributed


def _nodes_for(module: str, by_module: dict[str, list[str]]) -> list[str]:
    """The IR nodes an eager op of `module` is spread over: the module's own, else the nearest enclosing
    module's, else those of the modules inside it."""
    path = module
    while True:
        if by_module.get(path):
            return by_module[path]
        if not path:
            break
        path = path.rpartition(".")[0]
    inside = [n for m, nodes in by_module.items() if m.startswith(module + ".") or not module for n in nodes]
    return inside
