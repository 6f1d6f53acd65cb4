"""A capture that remembers where each IR node came from: its FX node and the user's module.

`profile` needs two things `capture_problem` drops: the module path of each IR node (`layers.3.mlp`, from the
exported FX node's `nn_module_stack`), to attribute kernels to the user's modules, and the FX node itself, to
write a fusion group out as a standalone problem file. Same export, lowering and attention rewrite as
capture_problem, so the graph (and the plan over it) is the one `generate` sees.

rewrite_attention replaces a written-out attention chain by one node and renumbers the names; the names after
it are matched to those before by walking both graphs in order (`_align`). A node that cannot be matched, or
whose FX node has no module stack, has module None: reported as "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kerntailor.capture.capture import Capture, _without_running_statistics, reads_training
from kerntailor.capture.cost import graph_cost
from kerntailor.capture.export import export_on_meta
from kerntailor.capture.lower import lower_program_traced
from kerntailor.capture.product_rows import flatten_product_rows
from kerntailor.capture.rewrite_attention import rewrite_attention
from kerntailor.ir.nodes import Attention, Graph, Matmul


@dataclass(frozen=True)
class TracedCapture:
    capture: Capture
    program: Any                          # the core-ATen ExportedProgram the graph was lowered from
    fx_of: Mapping[str, str]              # IR node name -> FX node name ("" where unknown)
    module_of: Mapping[str, str | None]   # IR node name -> module path ("" the model itself), None unknown


def capture_traced(name: str, model, inputs: list, dtype: str | None = None) -> TracedCapture:
    """Capture `model(*inputs)` (a meta model and meta inputs) with each IR node's FX node and module path."""
    training = model.training if reads_training(model) else None
    _without_running_statistics(model)
    program = export_on_meta(model, inputs, name)
    lowered, sources = lower_program_traced(program, name)
    graph = flatten_product_rows(rewrite_attention(lowered))
    if training is not None:
        graph = replace(graph, training=training)
    before = _align(lowered, graph)
    fx_nodes = {n.name: n for n in program.graph.nodes}
    fx_of = {n.name: sources.get(before.get(n.name, ""), "") for n in graph.nodes}
    module_of = {name_: _module_path(fx_nodes.get(fx)) for name_, fx in fx_of.items()}
    return TracedCapture(Capture(name, "default", dtype, graph, graph_cost(graph)), program, fx_of, module_of)


def _module_path(fx) -> str | None:
    stack = fx.meta.get("nn_module_stack") if fx is not None else None
    if not stack:
        return None
    return list(stack.values())[-1][0]


def _align(before: Graph, after: Graph) -> dict[str, str]:
    """Per node of `after` (rewrite_attention's result), the name of the node of `before` it is."""
    if before is after:
        return {n.name: n.name for n in after.nodes}
    out, i = {}, 0
    for node in after.nodes:
        j = i
        while j < len(before.nodes) and not _same(before.nodes[j], node):
            j += 1
        if j < len(before.nodes):
            out[node.name] = before.nodes[j].name
            i = j + 1
    return out


def _same(old, new) -> bool:
    if isinstance(new, Attention) and not isinstance(old, Attention):   # the chain's last product became it
        return isinstance(old, Matmul) and old.out.numel == new.out.numel and old.out.dtype == new.out.dtype
    return (type(old) is type(new) and old.out.dtype == new.out.dtype and old.out.numel == new.out.numel
            and old.origin == new.origin)   # flatten_product_rows reshapes a node (same elements)
