"""Which of the user's modules a fusion group's problem file computes, exactly: the unit `optimize` swaps.

A group is swapped for a generated kernel by replacing the *module* whose forward it computes. That is the
simplest form that stays honest: the module's forward is a function of its inputs and its own parameters and
buffers, so the kernel can take exactly those (the user's nn.Parameters stay where they are, the state_dict is
unchanged), and nothing else in the model needs to know. A group qualifies when its cut of the exported program
(profiling/extract.py: the FX nodes its problem file computes) is exactly the FX nodes that the module's forward
dispatched (their `nn_module_stack` names the module), it returns one value, and it reads from outside the
module exactly one tensor (the module's one argument) besides the module's own parameters and buffers.

Everything else is skipped with the reason: a group that spans module boundaries (a LayerNorm fused with the
GELU after it: part of the block that holds both, whose Linear is another group), one that is only part of a
module, the model's own top-level forward, a module of several tensor arguments (which FX value is which
argument is not recorded by the export; mapping them is not built).
"""

from __future__ import annotations

from dataclasses import dataclass

from kerntailor.capture.provenance import TracedCapture
from kerntailor.plan import FusionGroup
from kerntailor.profiling.attribute import UNKNOWN
from kerntailor.profiling.extract import cut_of

ARG = "arg"        # a slot the module's forward argument fills
STATE = "state"    # a slot one of the module's parameters or buffers fills


@dataclass(frozen=True)
class Slot:
    """One argument of the kernel's forward, in order: the module's argument, or a parameter/buffer by its name
    relative to the module (`weight`, `0.bias`)."""

    kind: str          # ARG | STATE
    name: str          # the problem file's argument name; for STATE also see `state`
    state: str = ""    # STATE: the name relative to the module


@dataclass(frozen=True)
class Scope:
    """The module a group's problem file computes exactly, and how the kernel's arguments come from it."""

    module: str
    slots: tuple[Slot, ...]

    @property
    def args(self) -> int:
        return sum(1 for s in self.slots if s.kind == ARG)


def group_scope(traced: TracedCapture, group: FusionGroup, owner: dict[str, str], module: str,
                modules: tuple[str, ...]) -> Scope | str:
    """The Scope of `group` (whose nodes' innermost common module is `module`, from `modules`), or why the group
    cannot be swapped as one module (module docstring)."""
    if module == UNKNOWN or UNKNOWN in modules:
        return "its nodes' module is unknown (no module stack in the export)"
    if not module:
        if len(modules) > 1:
            return (f"it spans modules {' + '.join(m or '(top)' for m in modules)}: no one submodule's forward "
                    "holds it")
        return "it computes part of the model's own forward (no submodule holds it)"
    cut = cut_of(traced, group, owner)
    if cut is None:
        return "none of its nodes comes from the exported program"
    inside = {n.name for n in traced.program.graph.nodes if n.op == "call_function" and module in _stack(n)}
    members = {n.name for n in cut.nodes}
    if inside - members:
        if len(modules) > 1:
            return (f"it spans modules {' + '.join(modules)}, part of {module}'s forward (whose other ops are in "
                    "other groups): only a group that is one module's whole forward is swapped")
        return f"it is part of {module}'s forward ({len(inside - members)} of its ops are in other groups)"
    if members - inside:
        return f"it computes ops outside {module} too"
    if len(cut.outputs) > 1:
        return f"it returns {len(cut.outputs)} values that others read (one output is swapped)"
    return _slots(traced, cut.inputs, module)


def _slots(traced: TracedCapture, inputs, module: str) -> Scope | str:
    sig = traced.program.graph_signature
    state = {**sig.inputs_to_parameters, **sig.inputs_to_buffers}
    slots = []
    for node in inputs:
        fqn = state.get(node.name)
        if fqn is not None:
            if not fqn.startswith(module + "."):
                return f"it reads {fqn}, a parameter or buffer of another module"
            slots.append(Slot(STATE, node.name, fqn[len(module) + 1:]))
        elif node.op == "placeholder" and node.name not in sig.user_inputs:
            return f"it reads {node.name}, a constant the export lifted (not a parameter, buffer or input)"
        else:
            slots.append(Slot(ARG, node.name))
    scope = Scope(module, tuple(slots))
    if scope.args != 1:
        return (f"{module} takes {scope.args} tensors from outside: which is which argument of its forward is "
                "not recorded (only a module of one tensor argument is swapped)")
    return scope


def _stack(node) -> set[str]:
    stack = node.meta.get("nn_module_stack") or {}
    return {v[0] for v in stack.values()}
