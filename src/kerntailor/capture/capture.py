"""capture_problem: a ProblemSpec and a variant → the IR graph with its costs."""

from __future__ import annotations

from dataclasses import dataclass

from kerntailor.capture.cost import GraphCost, graph_cost
from kerntailor.capture.export import export_on_meta
from kerntailor.capture.lower import lower_program
from kerntailor.ir.nodes import Graph
from kerntailor.problem.spec import ProblemSpec


@dataclass(frozen=True)
class Capture:
    problem: str
    variant: str
    dtype: str | None
    graph: Graph
    cost: GraphCost


def capture_problem(problem: ProblemSpec, variant: str = "default") -> Capture:
    """Trace the problem's model on meta tensors of `variant`'s shapes and lower it to the IR.

    Raises CaptureError naming the ops the IR cannot express.
    """
    model = problem.make_model(variant, device="meta")
    inputs = problem.make_inputs(variant, device="meta")
    program = export_on_meta(model, inputs, problem.name)
    graph = lower_program(program, problem.name)
    return Capture(problem.name, variant, problem.dtype, graph, graph_cost(graph))
