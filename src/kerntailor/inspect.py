"""`kerntailor inspect`: the captured graph, a first fusion plan, costs and the roofline floor."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from kerntailor.capture import Capture, capture_problem
from kerntailor.codegen import plan_of
from kerntailor.measure.floor import floor_of
from kerntailor.plan import Plan
from kerntailor.problem import load_problem
from kerntailor.targets import Floor, Target, resolve_target


@dataclass(frozen=True)
class Inspection:
    problem: str
    path: str
    variant: str
    dtype: str
    target: Target
    capture: Capture
    plan: Plan
    floor: Floor

    def to_dict(self) -> dict:
        g = self.capture.graph
        cost = self.capture.cost
        return {
            "problem": self.problem, "path": self.path, "variant": self.variant, "dtype": self.dtype,
            "target": {"name": self.target.name, "arch": self.target.arch, "backend": self.target.backend},
            "inputs": [{"name": i.name, "kind": i.kind, "target": i.target, "type": str(i.type)} for i in g.inputs],
            "nodes": [{"name": n.name, "family": n.family, "out": str(n.out), "origin": n.origin,
                       "operands": [v.describe() for v in n.operands], "op": n.describe(),
                       "flops": n.flops()} for n in g.nodes],
            "outputs": [v.describe() for v in g.outputs],
            "plan": [{"kernel": k.name, "family": k.family, "nodes": list(k.nodes), "inputs": list(k.inputs),
                      "outputs": list(k.outputs), "bytes": k.bytes_moved} for k in self.plan.groups],
            "cost": {"flops": cost.flops, "flops_matrix": cost.flops_matrix, "flops_vector": cost.flops_vector,
                     "min_bytes": cost.min_bytes, "min_bytes_read": cost.min_bytes_read,
                     "min_bytes_written": cost.min_bytes_written, "plan_bytes": self.plan.bytes_moved,
                     "unfused_bytes": cost.unfused_bytes, "arithmetic_intensity": _finite(cost.arithmetic_intensity)},
            "floor": {k: _finite(v) for k, v in asdict(self.floor).items()} | {
                "microseconds": self.floor.microseconds, "label": f"predicted from {self.floor.ceiling_source}"},
        }


def _finite(v):
    return None if isinstance(v, float) and v == float("inf") else v


def inspect_problem(path: str | Path, target: str, *, dtype: str | None = None,
                    variant: str = "default") -> Inspection:
    tgt = resolve_target(target)
    problem = load_problem(path, dtype=dtype)
    problem.variant(variant)  # a clear error for an unknown variant name
    capture = capture_problem(problem, variant)
    plan = plan_of(capture.graph)
    return Inspection(problem.name, str(path), variant, dtype or "as written", tgt, capture, plan,
                      floor_of(capture, tgt))


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def _flops(n: float) -> str:
    for unit, scale in (("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} FLOP"


def render_inspection(report: Inspection, json_out: bool = False) -> str:
    if json_out:
        return json.dumps(report.to_dict(), indent=2)
    g, cost, floor, t = report.capture.graph, report.capture.cost, report.floor, report.target
    lines = [f"{report.problem} ({report.path}), variant {report.variant}, dtype {report.dtype}",
             f"target {t.name} ({t.display_name}, {t.arch}, {t.backend})", "", "inputs:"]
    lines += [f"  {i.name:<24} {str(i.type):<28} {i.kind} {i.target}" for i in g.inputs]
    lines += ["", "graph (core ATen lowered to kerntailor IR):"]
    for n in g.nodes:
        operands = ", ".join(v.describe() for v in n.operands)
        lines.append(f"  {n.name:<10} = {n.family:<9} {str(n.out):<24} {n.describe()}  <- {operands}")
    lines.append(f"  outputs: {', '.join(v.describe() for v in g.outputs)}")
    lines += ["", f"fusion plan: {len(report.plan.groups)} kernel(s)"]
    for k in report.plan.groups:
        lines.append(f"  {k.name}: {k.family:<9} [{', '.join(k.nodes)}]  reads {', '.join(k.inputs) or '-'}"
                     f"  writes {', '.join(k.outputs)}  ({_bytes(k.bytes_moved)})")
    ai = cost.arithmetic_intensity
    lines += ["", "cost:",
              f"  FLOPs              {_flops(cost.flops)}"
              + (f" ({_flops(cost.flops_matrix)} on matrix units)" if cost.matrix else ""),
              f"  minimum bytes      {_bytes(cost.min_bytes)} (every input read once: {_bytes(cost.min_bytes_read)}; "
              f"every output written once: {_bytes(cost.min_bytes_written)})",
              f"  bytes as planned   {_bytes(report.plan.bytes_moved)}; unfused {_bytes(cost.unfused_bytes)}",
              f"  arithmetic int.    {ai:.3g} FLOP/byte (ridge point on {t.name}: {floor.ridge_point:.3g})",
              "",
              f"roofline floor on {t.name} (predicted from {floor.ceiling_source}s, {floor.rate_dtype}"
              f"{' matrix' if floor.matrix else ' vector'} rate {floor.peak_flops / 1e12:.1f} TFLOP/s, "
              f"{floor.memory_label}):",
              f"  {floor.microseconds:.1f} us, {floor.bound}-bound "
              f"(compute {floor.compute_seconds * 1e6:.1f} us, memory {floor.memory_seconds * 1e6:.1f} us)"]
    return "\n".join(lines)
