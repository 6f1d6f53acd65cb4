"""Predicted baselines: what eager PyTorch and torch.compile would take on a target that is not here.

Without the target's GPU the kernel's time is predicted (analytical.py) and so must be what it is compared with.
Both baselines are sums of kernels, each kernel

    seconds = LAUNCH_OVERHEAD_S[vendor]
            + max(matrix FLOPs / matrix rate + vector FLOPs / vector rate, bytes read and written / bandwidth)

at exactly the rates the analytical model charges the generated kernel (`targets.roofline_floor`: the dtype's
matrix-unit peak for library products, the datasheet bandwidth), or at `Ceilings` measured on a machine where
given. The predicted speed-ups divide one by the other, so both sides must stand on the same rates: an
achieved-bandwidth or library-efficiency factor on the baselines alone would make a kernel that moves the same
bytes as eager look faster by that factor (a first version charged eager 0.89 of the H200's datasheet
bandwidth and predicted relu 1.25x faster than eager on an MI300X). Both therefore run low by the same share
of the datasheet a real kernel reaches; benchmarks/baseline_prediction.py measures how low.

- eager (`predict_eager`): every ATen op eager dispatches is one kernel that reads its inputs and writes its
  outputs (costmodel/eager_trace.py: traced on meta tensors; views move nothing). Matrix products, convolutions
  and attention run at the library rate.
- torch.compile (`predict_compile`): Inductor's fusion, approximated by the project's own fusion plan
  (plan/fusion.py) over the captured graph: every group is one kernel at its compulsory bytes
  (`FusionGroup.bytes_moved`: its outside inputs read once, the outputs others read written once), except that
  a compute-bound group (codegen's `Family.compute_bound`: matmul, attention, and the library groups of
  convolutions and recurrent layers) is split as Inductor's default mode
  does: the product is an extern library call (cuBLAS / hipBLASLt, cuDNN / MIOpen, flash attention) that
  writes its output, and its epilogue (and any row reduction the plan fused into it) is one more kernel that
  reads that output back. Inductor's max-autotune (Triton GEMM templates with fused epilogues) is not modelled.

The one constant is the analytical model's launch cost per kernel, LAUNCH_OVERHEAD_S (3 us NVIDIA, 5 us AMD;
recalled, [U]), shared so that a kernel and a baseline of as many launches pay the same. Nothing is fitted to
the baselines it is checked against (benchmarks/baseline_prediction.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace

from kerntailor.capture.cost import MATRIX_FAMILIES, view_bytes
from kerntailor.codegen import FAMILIES, plan_of
from kerntailor.costmodel.analytical import LAUNCH_OVERHEAD_S
from kerntailor.costmodel.eager_trace import EagerOp, trace_eager
from kerntailor.ir.nodes import Graph, Recurrent
from kerntailor.plan.fusion import Plan
from kerntailor.targets.roofline import VENDOR, Ceilings, roofline_floor
from kerntailor.targets.spec import Target

MODEL = "baseline model v1"
FLOAT_RATES = ("fp64", "fp32", "bf16", "fp16")


@dataclass(frozen=True)
class KernelEstimate:
    """One kernel of a baseline: what it does and its predicted seconds."""

    ops: tuple[str, ...]          # eager: the ATen op; compile: the IR nodes of the kernel
    flops_matrix: int
    flops_vector: int
    bytes_read: int
    bytes_written: int
    dtype: str
    library: bool                 # a library product (on the matrix units)
    seconds: float

    def to_dict(self) -> dict:
        return {"ops": list(self.ops), "flops_matrix": self.flops_matrix, "flops_vector": self.flops_vector,
                "bytes_read": self.bytes_read, "bytes_written": self.bytes_written, "dtype": self.dtype,
                "library": self.library, "us": self.seconds * 1e6}


@dataclass(frozen=True)
class BaselineEstimate:
    """A predicted baseline: its kernels and their summed time."""

    name: str                     # "eager" | "compile"
    kernels: tuple[KernelEstimate, ...]

    @property
    def seconds(self) -> float:
        return sum(k.seconds for k in self.kernels)

    @property
    def bytes(self) -> int:
        return sum(k.bytes_read + k.bytes_written for k in self.kernels)


@dataclass(frozen=True)
class PredictedBaselines:
    """Eager and torch.compile predicted for one target; `label` goes beside every number taken from them."""

    target: str
    eager: BaselineEstimate
    compile: BaselineEstimate
    model: str = MODEL
    ceilings: str = VENDOR        # what the rates came from: "vendor peak" or the measured ceilings' source

    @property
    def label(self) -> str:
        """'predicted (mi300x, baseline model v1)'."""
        return f"predicted ({self.target}, {self.model})"

    def to_dict(self, kernel_seconds: float | None = None) -> dict:
        """The report's "baselines" entry; with the kernel's (predicted) seconds, the predicted speed-ups."""
        out = {"label": self.label, "model": self.model, "target": self.target, "rates": self.ceilings,
               "eager_us": self.eager.seconds * 1e6, "compile_us": self.compile.seconds * 1e6,
               "eager_kernels": len(self.eager.kernels), "compile_kernels": len(self.compile.kernels),
               "eager_bytes": self.eager.bytes, "compile_bytes": self.compile.bytes}
        if kernel_seconds:
            out |= {"kernel_us": kernel_seconds * 1e6,
                    "speedup_vs_eager": self.eager.seconds / kernel_seconds,
                    "speedup_vs_compile": self.compile.seconds / kernel_seconds}
        return out


def _rate_dtype(dtype: str) -> str:
    """The rate key of a kernel's dtype: integer and boolean work is charged at the fp32 rates."""
    return dtype if dtype in FLOAT_RATES else "fp32"


def kernel_seconds(target: Target, *, flops_matrix: float, flops_vector: float, bytes_read: int,
                   bytes_written: int, dtype: str, ceilings: Ceilings | None = None) -> float:
    """One kernel's predicted seconds (module docstring)."""
    total = bytes_read + bytes_written
    if flops_matrix:
        floor = roofline_floor(target, flops=flops_matrix, vector_flops=flops_vector, min_bytes=total,
                               dtype=_rate_dtype(dtype), matrix=True, ceilings=ceilings, read_bytes=bytes_read)
    else:
        floor = roofline_floor(target, flops=flops_vector, min_bytes=total, dtype=_rate_dtype(dtype),
                               matrix=False, ceilings=ceilings, read_bytes=bytes_read)
    return LAUNCH_OVERHEAD_S[target.vendor] + floor.seconds


def predict_eager(ops: Iterable[EagerOp], target: Target, ceilings: Ceilings | None = None) -> BaselineEstimate:
    """Eager PyTorch: one kernel per traced ATen op (`trace_eager`)."""
    kernels = []
    for op in ops:
        matrix, vector = (op.flops, 0) if op.matrix else (0, op.flops)
        kernels.append(KernelEstimate((op.op,), matrix, vector, op.bytes_read, op.bytes_written, op.dtype,
                                      op.matrix and bool(op.flops),
                                      kernel_seconds(target, flops_matrix=matrix, flops_vector=vector,
                                                     bytes_read=op.bytes_read, bytes_written=op.bytes_written,
                                                     dtype=op.dtype, ceilings=ceilings)))
    return BaselineEstimate("eager", tuple(kernels))


def compile_kernels(graph: Graph) -> list[tuple[str, ...]]:
    """The kernels torch.compile would launch, as tuples of IR node names in launch order (module docstring)."""
    return _compile_kernels(plan_of(graph))


def _compile_kernels(plan: Plan) -> list[tuple[str, ...]]:
    kernels = []
    for group in plan.launch_order():
        if FAMILIES[group.family].compute_bound:   # a matmul, attention or library anchor: an extern kernel
            anchor = group.anchor
            kernels.append((anchor,))
            rest = tuple(n for n in group.nodes if n != anchor)
            if rest:
                kernels.append(rest)
        else:
            kernels.append(group.nodes)
    return kernels


def _kernel_estimate(graph: Graph, members: tuple[str, ...], consumers: dict[str, list[str]],
                     graph_outputs: set[str], target: Target, ceilings: Ceilings | None,
                     recomputing: Mapping[str, Collection[str]] = {}) -> KernelEstimate:
    """A kernel running `members`: outside inputs read once each (their widest view), outputs that anything
    outside it reads written once, but for readers that compute the member themselves (`recomputing`:
    Plan.recomputing())."""
    inside = set(members)
    nodes = [graph.node(n) for n in members]
    reads: dict[str, int] = {}
    for node in nodes:
        for view in node.operands:
            if view.base not in inside:
                ttype = graph.buffer_type(view.base)
                reads[view.base] = max(reads.get(view.base, 0), min(view_bytes(view, ttype.dtype), ttype.nbytes))
    written = sum(n.out.nbytes for n in nodes
                  if n.name in graph_outputs or any(c not in inside and c not in recomputing.get(n.name, ())
                                                    for c in consumers.get(n.name, ())))
    matrix = [n for n in nodes if n.family in MATRIX_FAMILIES]
    flops_matrix = sum(n.flops() for n in matrix if not isinstance(n, Recurrent)) + _recurrent_flops(matrix)
    flops_vector = sum(n.flops() for n in nodes if n.family not in MATRIX_FAMILIES)
    dtype = (graph.buffer_type(matrix[0].operands[0].base).dtype if matrix and matrix[0].operands
             else nodes[0].out.dtype)
    seconds = kernel_seconds(target, flops_matrix=flops_matrix, flops_vector=flops_vector,
                             bytes_read=sum(reads.values()), bytes_written=written, dtype=dtype, ceilings=ceilings)
    return KernelEstimate(members, flops_matrix, flops_vector, sum(reads.values()), written, dtype, bool(matrix),
                          seconds)


def _recurrent_flops(nodes) -> int:
    """The FLOPs of the recurrent calls among `nodes`, each call once. `Recurrent.flops` counts a call on its
    output-sequence result only, and a graph that returns h_n alone has no such node: the call's products are
    counted here as that result's would be."""
    calls = {n.call: replace(n, result=0).flops() for n in nodes if isinstance(n, Recurrent)}
    return sum(calls.values())


def predict_compile(graph: Graph, target: Target, ceilings: Ceilings | None = None) -> BaselineEstimate:
    """torch.compile (default mode): the fusion plan's kernels, matrix products as library calls."""
    consumers = graph.consumers()
    outputs = {v.base for v in graph.outputs}
    plan = plan_of(graph)
    recomputing = plan.recomputing()
    return BaselineEstimate("compile", tuple(_kernel_estimate(graph, members, consumers, outputs, target, ceilings,
                                                              recomputing)
                                             for members in _compile_kernels(plan)))


def predict_baselines(problem, graph: Graph, target: Target, ceilings: Ceilings | None = None,
                      variant: str = "default") -> PredictedBaselines:
    """Eager (traced from `problem` at `variant`) and torch.compile (from `graph`, the capture of the same
    variant) predicted for `target`."""
    return PredictedBaselines(target.name, predict_eager(trace_eager(problem, variant), target, ceilings),
                              predict_compile(graph, target, ceilings),
                              ceilings=ceilings.source if ceilings is not None else VENDOR)


def kernel_estimate(graph: Graph, members: tuple[str, ...], target: Target, ceilings: Ceilings | None = None,
                    consumers: dict[str, list[str]] | None = None,
                    recomputing: Mapping[str, Collection[str]] = {}) -> KernelEstimate:
    """One kernel running `members` (IR node names) at its compulsory bytes, launch included (profile's cost of
    a fusion group, and of a node alone). `consumers`: graph.consumers(), where the caller holds it;
    `recomputing`: the plan's (Plan.recomputing())."""
    return _kernel_estimate(graph, members, consumers if consumers is not None else graph.consumers(),
                            {v.base for v in graph.outputs}, target, ceilings, recomputing)
