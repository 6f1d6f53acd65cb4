"""Graph mode: the swap for a hot group that no module holds (scope.py skips it: it spans modules, computes ops of a
parent's own forward, returns several values).

The model's top-level forward is replaced, on the instance (`model.forward = GraphForward(...)`: the class, the
module tree and the state_dict are unchanged), by the core-ATen graph `profile` exported (capture/provenance.py) in
which each swapped group's FX nodes (its cut, profiling/extract.py) are replaced by one call to the group's generated
kernel (ModelNew: its checks, then one torch.library custom op with a fake implementation, so torch.compile and
CUDA graphs see through it). The kernel takes the cut's inputs in the order the group's problem file does; each FX
node the rest of the graph reads from the cut (a norm's three results) gets its value from the kernel's outputs, in
the file's order. Module swaps (swap.py) stay, and their groups are kernel calls in the graph too: the graph runs
every swapped group's kernel, the modules' own forwards run every module swap's.

The graph reads, at each call, the parameters and buffers from the modules that hold them in the model (each by its
state_dict name, resolved when the graph is installed), the lifted constants the export kept with their values, and
the call's own inputs (an empty constant the meta export traced on meta: an empty tensor, `real_constant`). A
buffer the forward writes is written (copy_) as the original forward writes it.

Guarded: the graph runs only on a call like the exported one: the same pytree of arguments (keywords included),
each tensor of the exported shape, dtype and device, every other argument equal, the model in the training mode it
was exported in, and no gradient needed (grad mode off, or on with no parameter or input requiring grad). Any other
call runs the class's own forward (with the module swaps in it): correct, without the graph's swaps.

What no kernel replaced runs as lean.py leaves it: no more device work than eager (shape-only subgraphs folded into
constants at install, SDPA masks that mask nothing dropped, repeated key/value heads read through enable_gqa, ops the
export decomposed called whole again). The folded constants are placeholders after the program's own, read as its
lifted constants are.

A group qualifies (`graph_cut`) when its cut reads nothing that depends on its own results (one kernel call can
take the place of its nodes); the graph is put back in a topological order after the swaps (a reader of a group's
first result that came before the group's last node now comes after the kernel call).
"""

from __future__ import annotations

import heapq
import logging
import operator
from dataclasses import dataclass

import torch
from torch import fx
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from kerntailor.capture.provenance import TracedCapture
from kerntailor.errors import KerntailorError
from kerntailor.optimizing.lean import lean_graph
from kerntailor.plan import FusionGroup
from kerntailor.profiling.extract import cut_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraphCut:
    """A group as the graph swaps it: FX node names of the exported program."""

    group: str
    nodes: tuple[str, ...]     # what the kernel call replaces (a node others still read is kept)
    inputs: tuple[str, ...]    # the kernel's arguments, in order (the problem file's forward arguments)
    outputs: tuple[str, ...]   # the nodes whose values are the kernel's results, in order

    @property
    def label(self) -> str:
        return f"graph: {len(self.nodes)} ops"


def graph_cut(traced: TracedCapture, group: FusionGroup, owner: dict[str, str]) -> GraphCut | str:
    """The group's GraphCut, or why one kernel call cannot take its nodes' place."""
    cut = cut_of(traced, group, owner)
    if cut is None:
        return "none of its nodes comes from the exported program"
    members = {n.name for n in cut.nodes}
    outputs = cut.outputs or (cut.nodes[-1],)
    if any(n.op != "call_function" for n in cut.nodes):
        return "its cut holds a node that is no op call"
    downstream, stack = set(), [u for n in cut.nodes for u in n.users if u.name not in members]
    while stack:
        n = stack.pop()
        if n.name not in downstream:
            downstream.add(n.name)
            stack.extend(n.users)
    late = [a.name for a in cut.inputs if a.name in downstream]
    if late:
        return f"it reads {late[0]}, which depends on its own result (no one kernel call can take its place)"
    return GraphCut(group.name, tuple(n.name for n in cut.nodes), tuple(a.name for a in cut.inputs),
                    tuple(n.name for n in outputs))


def real_constant(name: str, lost: torch.Tensor) -> torch.Tensor:
    """The value of a constant the meta export kept without one: capture lets through only one-element constants
    (real: capture/export.py builds them on the CPU) and empty ones (transformers' DynamicCache starts from
    `torch.tensor([], device=...)`, on meta in the export), so an empty tensor of its shape and dtype; anything else
    a KerntailorError."""
    if lost.numel() == 0:
        return torch.empty(lost.shape, dtype=lost.dtype)
    raise KerntailorError(f"the constant {name} was traced on the meta device (its value is lost)")


class GraphForward:
    """The callable set as the model's forward (module docstring). `swaps`: (GraphCut, kernel module) pairs."""

    def __init__(self, model: torch.nn.Module, program, swaps: tuple, example_inputs: list):
        self.original = type(model).forward.__get__(model)
        self.swaps = tuple(swaps)
        sig = program.graph_signature
        flat, spec = pytree.tree_flatten((tuple(example_inputs), {}))
        if spec != program.call_spec.in_spec:
            raise KerntailorError("the example inputs are not the pytree the program was exported for")
        device = _device_of(model, flat)
        self.reads, self.sources, self.constants, users = [], [], {}, 0   # sources: what save.py writes
        known = {}   # placeholder name -> value, of the lifted constants
        for s in sig.input_specs:
            if s.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                holder, _, leaf = s.target.rpartition(".")
                owner = model.get_submodule(holder)
                store = owner._parameters if s.kind == InputKind.PARAMETER else owner._buffers
                if leaf not in store:
                    raise KerntailorError(f"{s.target} is not where the export found it")
                self.reads.append(("state", (store, leaf)))
                self.sources.append((s.kind.name.lower(), s.target))
            elif s.kind == InputKind.CONSTANT_TENSOR:
                value = program.constants[s.target]
                if isinstance(value, torch.Tensor) and value.is_meta:
                    value = real_constant(s.target, value)
                self.constants[s.target] = value.to(device) if value.dim() else value
                self.reads.append(("value", self.constants[s.target]))
                self.sources.append(("constant", s.target))
                known[s.arg.name] = self.constants[s.target]
            elif s.kind == InputKind.USER_INPUT:
                self.reads.append(("input", users))
                self.sources.append(("input", users))
                users += 1
            else:
                raise KerntailorError(f"the exported program takes a {s.kind.name} input")
        if users != len(flat):
            raise KerntailorError(f"the exported program takes {users} inputs, the example has {len(flat)}")
        self.writes, self.targets = [], []   # targets: what save.py writes
        for s in sig.output_specs:
            if s.kind == OutputKind.USER_OUTPUT:
                self.writes.append(None)
                self.targets.append(None)
            elif s.kind == OutputKind.BUFFER_MUTATION:
                holder, _, leaf = s.target.rpartition(".")
                self.writes.append(("state", (model.get_submodule(holder)._buffers, leaf)))
                self.targets.append(("buffer", s.target))
            elif s.kind == OutputKind.USER_INPUT_MUTATION:
                names = [i.arg.name for i in sig.input_specs if i.kind == InputKind.USER_INPUT]
                self.writes.append(("input", names.index(s.target)))
                self.targets.append(("input", names.index(s.target)))
            else:
                raise KerntailorError(f"the exported program returns a {s.kind.name}")
        self.in_spec, self.out_spec = spec, program.call_spec.out_spec
        self.example = tuple((tuple(v.shape), v.dtype, v.device) if isinstance(v, torch.Tensor) else v for v in flat)
        self.training = tuple(m.training for m in model.modules())
        self.model_modules = tuple(model.modules())
        self.graph, folded = swapped_graph(program, self.swaps, device, known)
        for name, value in folded.items():   # lean.py's constants: placeholders after the program's own
            self.constants[name] = value
            self.reads.append(("value", value))
            self.sources.append(("constant", name))

    def __call__(self, *args, **kwargs):
        flat, spec = pytree.tree_flatten((args, kwargs))
        if not self._matches(flat, spec):
            return self.original(*args, **kwargs)
        values = []
        for kind, what in self.reads:
            values.append(what[0][what[1]] if kind == "state" else flat[what] if kind == "input" else what)
        outs = self.graph(*values)
        user = []
        for write, value in zip(self.writes, outs):
            if write is None:
                user.append(value)
            elif write[0] == "state":
                write[1][0][write[1][1]].copy_(value)
            else:
                flat[write[1]].copy_(value)
        return pytree.tree_unflatten(user, self.out_spec)

    def _matches(self, flat: list, spec) -> bool:
        if spec != self.in_spec or len(flat) != len(self.example):
            return False
        for v, ex in zip(flat, self.example):
            if isinstance(v, torch.Tensor):
                if not isinstance(ex, tuple) or (tuple(v.shape), v.dtype, v.device) != ex:
                    return False
            elif isinstance(ex, tuple) or v != ex:
                return False
        if tuple(m.training for m in self.model_modules) != self.training:
            return False
        if torch.is_grad_enabled():
            tensors = [v for v in flat if isinstance(v, torch.Tensor)]
            tensors += [w[0][w[1]] for k, w in self.reads if k == "state"]
            if any(t.requires_grad for t in tensors):
                return False
        return True

    def __repr__(self) -> str:
        return f"GraphForward({len(self.swaps)} kernel call(s) in the exported graph; else the class's forward)"


def install_graph(model: torch.nn.Module, program, swaps: tuple, example_inputs: list) -> None:
    """Set (or, with no swaps, remove) the model's graph forward, in place. Raises KerntailorError where the exported
    program cannot run as the model's forward (its reason)."""
    if not swaps:
        model.__dict__.pop("forward", None)
        return
    object.__setattr__(model, "forward", GraphForward(model, program, swaps, example_inputs))


def graph_forward(model: torch.nn.Module) -> GraphForward | None:
    """The model's GraphForward, None where it runs its class's forward."""
    value = model.__dict__.get("forward")
    return value if isinstance(value, GraphForward) else None


def swapped_graph(program, swaps: tuple, device: torch.device, known: dict | None = None):
    """(the exported program's graph module with each swap's nodes replaced by a call to its kernel, constants made
    on `device` (the export ran on meta), in a topological order, made lean (lean.py: `known` are the values of the
    lifted constants' placeholders); the constants lean.py folded, by the names of the placeholders it added).
    Where lean.py fails (a torch it does not know), the graph as the export wrote it, and a warning."""
    gm = _swapped(program, swaps, device)
    try:
        return gm, lean_graph(gm, known or {})
    except Exception as e:  # noqa: BLE001  the graph without lean.py is the same function
        log.warning("graph mode runs the exported graph as it is: lean.py failed (%s: %s)", type(e).__name__, e)
        return _swapped(program, swaps, device), {}


def _swapped(program, swaps: tuple, device: torch.device) -> fx.GraphModule:
    """The exported program's graph module with each swap's nodes replaced by a call to its kernel, constants made on
    `device`, in a topological order."""
    import copy

    gm = fx.GraphModule(program.graph_module, copy.deepcopy(program.graph))
    graph = gm.graph
    nodes = {n.name: n for n in graph.nodes}
    for n in graph.nodes:
        n.args, n.kwargs = _on_device(n.args, device), _on_device(n.kwargs, device)
    replaced: set[str] = set()
    for i, (cut, kernel) in enumerate(swaps):
        gm.add_submodule(f"kernel_{i}", kernel)
        members = [nodes[name] for name in cut.nodes]
        if replaced & set(cut.nodes) or any(m._erased for m in members):
            raise KerntailorError(f"{cut.group} shares its ops with a group swapped before it")
        replaced |= set(cut.outputs)
        with graph.inserting_after(max(members, key=_position(graph))):
            call = graph.call_module(f"kernel_{i}", tuple(nodes[a] for a in cut.inputs))
        outs = [call]
        if len(cut.outputs) > 1:
            with graph.inserting_after(call):
                outs = [graph.call_function(operator.getitem, (call, k)) for k in range(len(cut.outputs))]
        _carry_meta(call, outs, [nodes[name] for name in cut.outputs])
        for name, new in zip(cut.outputs, outs):
            nodes[name].replace_all_uses_with(new)
            nodes[name] = new
        for m in reversed(members):
            if not m.users:
                graph.erase_node(m)
    _sort(graph)
    graph.lint()
    gm.recompile()
    return gm


def _carry_meta(call: fx.Node, outs: list[fx.Node], replaced: list[fx.Node]) -> None:
    """The kernel call's nodes get the values (shape, dtype: meta["val"]) of the nodes they stand for: the kernel's
    results are those values (the referee checked shapes and dtypes). lean.py decides its rewrites by them; without
    them a rewrite that reads a kernel's result is skipped (issue #21: with Llama decode's KV-cache concatenations
    swapped, every SDPA kept transformers' repeated heads, a clone of 4x the cache per key and value)."""
    values = [n.meta.get("val") for n in replaced]
    for new, value in zip(outs, values):
        if value is not None:
            new.meta["val"] = value
    if outs[0] is not call and all(v is not None for v in values):
        call.meta["val"] = tuple(values)


def _position(graph):
    index = {n: i for i, n in enumerate(graph.nodes)}
    return index.__getitem__


def _sort(graph: fx.Graph) -> None:
    """Nodes in a topological order, each as early as its inputs and the original order allow (stable); the output
    node stays last, and ops with side effects (an in-place copy, a grad-mode switch) keep their order."""
    order = [n for n in graph.nodes if n.op != "output"]
    index = {n: i for i, n in enumerate(order)}
    after = {n: [u for u in n.users if u.op != "output"] for n in order}
    impure = [n for n in order if n.op == "call_function" and n.is_impure()]
    for a, b in zip(impure, impure[1:]):
        after[a].append(b)
    waiting = {n: 0 for n in order}
    for n in order:
        for u in after[n]:
            waiting[u] += 1
    ready = [index[n] for n in order if waiting[n] == 0]
    heapq.heapify(ready)
    placed = []
    while ready:
        n = order[heapq.heappop(ready)]
        placed.append(n)
        for u in after[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, index[u])
    if len(placed) != len(order):
        raise KerntailorError("the swapped graph has a cycle")
    if placed == order:
        return
    for a, b in zip(placed, placed[1:]):
        a.append(b)


def _on_device(value, device):
    """`value` (a node's args or kwargs) with the meta device, where the export traced, replaced by `device`."""
    if isinstance(value, torch.device) and value.type == "meta":
        return device
    if isinstance(value, tuple):
        return tuple(_on_device(v, device) for v in value)
    if isinstance(value, list):
        return [_on_device(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _on_device(v, device) for k, v in value.items()}
    return value


def _device_of(model: torch.nn.Module, flat: list) -> torch.device:
    for t in [v for v in flat if isinstance(v, torch.Tensor)] + list(model.parameters()) + list(model.buffers()):
        return t.device
    return torch.device("cpu")
