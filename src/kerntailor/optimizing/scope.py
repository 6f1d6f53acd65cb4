"""Which of the user's modules a fusion group's problem file computes, exactly: the unit `optimize` swaps.

A group is swapped for a generated kernel by replacing the *module* whose forward it computes. That is the
simplest form that stays honest: the module's forward is a function of its inputs and its own parameters and
buffers, so the kernel can take exactly those (the user's nn.Parameters stay where they are, the state_dict is
unchanged), and nothing else in the model needs to know. A group qualifies when its cut of the exported program
(profiling/extract.py: the FX nodes its problem file computes) is exactly the FX nodes that the module's forward
dispatched (their `nn_module_stack` names the module), it returns one value, and it reads from outside the
module exactly one tensor (the module's one argument) besides the module's own parameters and buffers.

A chain of sibling modules qualifies the same way: a LayerNorm fused with the GELU after it, called one on the
other's result by their parent (`act(norm(x))`, a Sequential's consecutive members). The group must then be
exactly the siblings' forwards, each sibling after the first reading only the one before's result (and its own
parameters), nothing else reading those in-between results, and nothing of the parent's own forward between
them. The first sibling is replaced by the kernel, the others by pass-throughs (swap.py) that keep their
parameters: the parent's forward, unchanged, calls them in the same order.

The model itself qualifies the same way when the group is its whole forward (a KernelBench-style problem of
one kernel): the returned model is then the Tailored one.

Everything else is skipped with the reason: a group that spans module boundaries otherwise (the parent's own
ops in it, a sibling whose other ops are in another group), one that is only part of a module, part of the model's
own top-level forward, a module of several tensor arguments (which FX value is which argument is not recorded by
the export; mapping them is not built).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from kerntailor.capture.provenance import TracedCapture
from kerntailor.plan import FusionGroup
from kerntailor.profiling.attribute import UNKNOWN
from kerntailor.profiling.extract import cut_of

ARG = "arg"        # a slot the module's forward argument fills
STATE = "state"    # a slot one of the module's parameters or buffers fills


@dataclass(frozen=True)
class Slot:
    """One argument of the kernel's forward, in order: the module's argument, or a parameter/buffer by its name
    relative to the module that holds it (`weight`, `0.bias`; `owner` indexes Scope.modules)."""

    kind: str          # ARG | STATE
    name: str          # the problem file's argument name
    owner: int = 0     # STATE: which of Scope.modules holds it
    state: str = ""    # STATE: its name relative to that module


@dataclass(frozen=True)
class Scope:
    """The module (or chain of sibling modules, in call order) a group's problem file computes exactly, and how
    the kernel's arguments come from it."""

    modules: tuple[str, ...]
    slots: tuple[Slot, ...]
    reshape: tuple[int, ...] | None = None   # the module returns the kernel's result viewed to this shape

    @property
    def module(self) -> str:
        """The module replaced by the kernel (the chain's first)."""
        return self.modules[0]

    @property
    def label(self) -> str:
        return " + ".join(m or "(the whole model)" for m in self.modules)

    @property
    def args(self) -> int:
        return sum(1 for s in self.slots if s.kind == ARG)


def group_scope(traced: TracedCapture, group: FusionGroup, owner: dict[str, str], module: str,
                modules: tuple[str, ...]) -> Scope | str:
    """The Scope of `group` (whose nodes' innermost common module is `module`, from `modules`), or why the group
    cannot be swapped as one module (module docstring)."""
    if module == UNKNOWN or UNKNOWN in modules:
        return "its nodes' module is unknown (no module stack in the export)"
    cut = cut_of(traced, group, owner)
    if cut is None:
        return "none of its nodes comes from the exported program"
    if len(cut.outputs) > 1:
        return f"it returns {len(cut.outputs)} values that others read (one output is swapped)"
    members = {n.name for n in cut.nodes}
    if _inside(traced, module) == members:   # module "": the model's whole forward is the group
        return _slots(traced, cut.inputs, (module,))
    shape = _trailing_view(traced, module, members, owner)
    if shape is not None:
        scope = _slots(traced, cut.inputs, (module,))
        return replace(scope, reshape=shape) if isinstance(scope, Scope) else scope
    chain = _chain(traced, module, members)
    if isinstance(chain, tuple):
        return _slots(traced, cut.inputs, chain)
    spans = " + ".join(m or "(top)" for m in modules)
    if not module:
        return (f"it spans modules {spans}: no one submodule's forward holds it ({chain})" if len(modules) > 1
                else "it computes part of the model's own forward (no submodule holds it)")
    if len(modules) > 1:
        return f"it spans modules {spans}, part of {module}'s forward, and is no chain of its submodules: {chain}"
    inside = _inside(traced, module)
    if members - inside:
        return f"it computes ops outside {module} too"
    return f"it is part of {module}'s forward ({len(inside - members)} of its ops are in other groups)"


VIEWS = frozenset({"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
                   "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims"})


def _trailing_view(traced: TracedCapture, module: str, members: set[str], owner: dict[str, str]):
    """The shape `module` returns where its forward is the group and then views of the group's result that no
    group computes (a Linear on a 3-d input: view, mm, view); else None."""
    extra = [n for n in traced.program.graph.nodes if n.name in _inside(traced, module) - members]
    if any(str(n.target) not in VIEWS or n.name in owner for n in extra):
        return None
    names = {n.name for n in extra}
    if any(a.name not in members | names for n in extra for a in n.all_input_nodes):
        return None
    ends = [n for n in extra if any(u.name not in names for u in n.users)]
    if len(ends) != 1 or not isinstance(ends[0].meta.get("val"), torch.Tensor):
        return None
    return tuple(int(d) for d in ends[0].meta["val"].shape)


def _inside(traced: TracedCapture, module: str) -> set[str]:
    """The FX nodes `module`'s forward dispatched (its submodules' included)."""
    return {n.name for n in traced.program.graph.nodes if n.op == "call_function" and module in _stack(n)}


def _chain(traced: TracedCapture, parent: str, members: set[str]) -> tuple[str, ...] | str:
    """The children of `parent` (in call order) whose forwards the group is exactly, each after the first reading
    only the one before's result (module docstring); else why not."""
    prefix = parent + "." if parent else ""
    nodes = [n for n in traced.program.graph.nodes if n.name in members]
    child_of = {}
    for n in nodes:
        child = next((p for p in _stack(n) if p != parent and p.startswith(prefix) and "." not in p[len(prefix):]),
                     None)
        if child is None:
            return f"{n.name} is {parent or 'the model'}'s own op, in no submodule"
        child_of[n.name] = child
    chain = tuple(dict.fromkeys(child_of[n.name] for n in nodes))
    for child in chain:
        rest = _inside(traced, child) - members
        if rest:
            return f"{child}'s other ops ({len(rest)}) are in other groups"
    state = _state_inputs(traced)
    for before, child in zip(chain, chain[1:]):
        reads = {a.name for n in nodes if child_of[n.name] == child for a in n.all_input_nodes
                 if a.name not in state and child_of.get(a.name) != child}
        made = {n.name for n in nodes if child_of[n.name] == before}
        if len(reads) != 1 or not reads <= made:
            return f"{child} does not read exactly {before}'s result"
        leaving = [n for n in nodes if child_of[n.name] == before
                   and any(child_of.get(u.name) != before for u in n.users)]
        readers = {child_of.get(u.name) for n in leaving for u in n.users} - {before}
        if {n.name for n in leaving} != reads or readers != {child}:
            return f"{before}'s result is read by more than {child}"
    return chain


def _state_inputs(traced: TracedCapture) -> dict[str, str]:
    sig = traced.program.graph_signature
    return {**sig.inputs_to_parameters, **sig.inputs_to_buffers}


def _slots(traced: TracedCapture, inputs, modules: tuple[str, ...]) -> Scope | str:
    sig = traced.program.graph_signature
    state = _state_inputs(traced)
    slots = []
    for node in inputs:
        fqn = state.get(node.name)
        if fqn is not None:
            holder = next((i for i, m in enumerate(modules) if not m or fqn.startswith(m + ".")), None)
            if holder is None:
                return f"it reads {fqn}, a parameter or buffer of another module"
            prefix = modules[holder]
            slots.append(Slot(STATE, node.name, holder, fqn[len(prefix) + 1:] if prefix else fqn))
        elif node.op == "placeholder" and node.name not in sig.user_inputs:
            return f"it reads {node.name}, a constant the export lifted (not a parameter, buffer or input)"
        else:
            slots.append(Slot(ARG, node.name))
    scope = Scope(modules, tuple(slots))
    if scope.args != 1:
        return (f"{scope.label} takes {scope.args} tensors from outside: which is which argument of its forward "
                "is not recorded (only a module of one tensor argument is swapped)")
    return scope


def _stack(node) -> set[str]:
    stack = node.meta.get("nn_module_stack") or {}
    return {v[0] for v in stack.values()}
