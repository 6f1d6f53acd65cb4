"""A fusion group written out as a standalone KernelBench-format problem file.

The group's ops are cut from the exported core-ATen program (the one its IR was lowered from): the FX nodes
that lowered to its IR nodes, with the views, constants and `getitem`s between them (nodes that lowered to no
IR node of any group, pulled in from the group's side). What it reads from outside (the model's inputs and
parameters, other groups' results) becomes forward()'s arguments, made by get_inputs() with the real shapes
and dtypes (random values: a parameter's, a mask's actual values are not kept). What others read from it is
returned. An FX node that lowered to IR nodes of several groups (a convolution with its bias: the product in
one group, the bias add in the next) is written whole into each group's file: such a file holds a little more
than its group, and its docstring names what (`extra_nodes`).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path

from kerntailor.capture.provenance import TracedCapture
from kerntailor.plan import FusionGroup
from kerntailor.problem.spec import dtype_name

TEMPLATE = '''"""{doc}"""
import torch
from torch import device  # noqa: F401  (the cut graph may name a device)

inf = float("inf")
nan = float("nan")
{sizes}

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

{forward}

def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
'''


def owners(traced: TracedCapture, groups: tuple[FusionGroup, ...]) -> dict[str, str]:
    """FX node name -> the group that owns it (the group of the IR node its value is)."""
    group_of = {n: g.name for g in groups for n in g.nodes}
    out = {}
    for ir, fx in traced.fx_of.items():
        if fx and ir in group_of:
            out[fx] = group_of[ir]   # the last IR node a FX node emitted is its value
    for n in traced.program.graph.nodes:   # a tuple's elements go with it (var_mean's mean and var)
        if n.target is operator.getitem and n.args[0].name in out:
            out[n.name] = out[n.args[0].name]
    return out


@dataclass(frozen=True)
class Cut:
    """What a group's problem file holds, as FX nodes of the exported program: the nodes it computes (in graph
    order), what it reads from outside (its forward()'s arguments, in order) and what others read from it (its
    results; none listed means it returns its last node)."""

    nodes: tuple
    inputs: tuple
    outputs: tuple


def cut_of(traced: TracedCapture, group: FusionGroup, owner: dict[str, str]) -> Cut | None:
    """The group's cut of the exported program (Cut); None where none of its nodes has an FX node."""
    graph = traced.program.graph
    mine = _fx_nodes(traced, group)
    members = _members(graph, mine, owner)
    order = [n for n in graph.nodes if n.name in members]
    if not order:
        return None
    inputs = list(dict.fromkeys(a for n in order for a in n.all_input_nodes if a.name not in members))
    users_outside = [n for n in order if n.name in mine and _read_outside(n, members)
                     and not isinstance(n.meta.get("val"), (tuple, list))]
    return Cut(tuple(order), tuple(inputs), tuple(users_outside))


FIXED = "# no smaller sizes build (the cut graph fixes some inside forward): judged at the real ones"


def group_source(traced: TracedCapture, group: FusionGroup, owner: dict[str, str], doc: str,
                 fixed: bool = False) -> str | None:
    """The problem file's text for `group` (module docstring); None where none of its nodes has an FX node."""
    import torch
    import torch.fx as fx

    found = cut_of(traced, group, owner)
    if found is None:
        return None
    order, inputs, users_outside = list(found.nodes), list(found.inputs), list(found.outputs)
    cut = fx.Graph()
    env = {a: cut.placeholder(a.name) for a in inputs}
    first = next(iter(env.values()), None)
    for n in order:
        env[n] = cut.node_copy(n, lambda a: env[a])
        if "device" in n.kwargs and first is not None:   # traced on meta: make constants where the inputs are
            env[n].kwargs = {**n.kwargs, "device": _device_of(cut, env[n], first)}
    outs = [env[n] for n in users_outside] or [env[order[-1]]]
    cut.output(outs[0] if len(outs) == 1 else tuple(outs))
    code = fx.GraphModule(torch.nn.Module(), cut).code
    forward = "\n".join(("    " + line) if line.strip() else "" for line in code.strip("\n").splitlines())
    names = _size_names(inputs)
    sizes = "".join(f"{n} = {v}\n" for v, n in names.items()) + ("VARIANTS = {}  " + FIXED + "\n" if fixed else "")
    return TEMPLATE.format(doc=doc, forward=_named_sizes(forward, names), sizes=sizes,
                           inputs=", ".join(_named_sizes(_make_input(a), names) for a in inputs))


def _size_names(inputs) -> dict[int, str]:
    """The inputs' sizes >= MIN_SIZE as module-level constants (dim0 = 1024, ...), so that the problem loader
    can shrink them into the small and odd variants the referee judges on the CPU."""
    from kerntailor.problem.variants import MIN_SIZE

    sizes = [int(s) for a in inputs for s in a.meta["val"].shape if int(s) >= MIN_SIZE]
    return {v: f"dim{i}" for i, v in enumerate(dict.fromkeys(sizes))}


def _named_sizes(code: str, names: dict[int, str]) -> str:
    """`code` with each size inside a shape (a bracketed or parenthesized list of integers) by its name: the
    cut graph's views and expands then follow the inputs when the loader shrinks them."""
    import re

    def name_all(m: re.Match) -> str:
        return re.sub(r"\d+", lambda d: names.get(int(d.group()), d.group()), m.group())

    return re.sub(r"[\[(]\d+(?:, *\d+)*,?[\])]", name_all, code)


def _device_of(cut, node, first):
    with cut.inserting_before(node):
        return cut.call_function(getattr, (first, "device"))


def _fx_nodes(traced: TracedCapture, group: FusionGroup) -> set[str]:
    """The FX nodes that lowered to the group's IR nodes, with the `getitem`s of those that return tuples."""
    mine = {traced.fx_of.get(n, "") for n in group.nodes} - {""}
    return mine | {n.name for n in traced.program.graph.nodes
                   if n.target is operator.getitem and n.args[0].name in mine}


def extra_nodes(traced: TracedCapture, group: FusionGroup) -> tuple[str, ...]:
    """IR nodes of other groups that the group's file computes too (module docstring)."""
    mine = _fx_nodes(traced, group)
    return tuple(n for n, fx in traced.fx_of.items() if fx in mine and n not in group.nodes)


def _members(graph, mine: set[str], owner: dict[str, str]) -> set[str]:
    """The group's FX nodes and the free ones (owned by no group) upstream of them, up to other groups' nodes."""
    nodes = {n.name: n for n in graph.nodes}
    stack = list(mine)
    members: set[str] = set()
    while stack:
        name = stack.pop()
        if name in members:
            continue
        members.add(name)
        for a in nodes[name].all_input_nodes:
            if a.op == "call_function" and a.name not in owner:
                stack.append(a.name)
    return members


def _read_outside(n, members: set[str]) -> bool:
    return any(u.op == "output" or u.name not in members for u in n.users)


def _make_input(node) -> str:
    val = node.meta.get("val")
    shape = tuple(int(s) for s in val.shape)
    name = dtype_name(val.dtype)
    dtype = f"torch.{str(val.dtype).removeprefix('torch.')}"
    if val.dtype.is_floating_point:
        return f"torch.randn({shape}, dtype={dtype})"
    if name == "bool":
        return f"torch.rand({shape}) > 0.5"
    return f"torch.randint(0, 2, {shape}, dtype={dtype})"


def write_group(out_dir: Path, model: str, rank: int, traced: TracedCapture, group: FusionGroup,
                owner: dict[str, str], doc: str) -> Path:
    """Write the group's problem file. Where the loader finds no smaller variant of its sizes (a view in
    forward fixes a size the inputs' constants do not move), the file declares none: judged at its real sizes.
    None (nothing written) where the group cannot be cut out (group_source)."""
    from kerntailor.errors import ProblemError
    from kerntailor.problem import load_problem

    path = Path(out_dir) / f"{rank:02d}_{model}_{group.name}.py"
    source = group_source(traced, group, owner, doc)
    if source is None:
        return None
    path.write_text(source)
    try:
        load_problem(path)
    except ProblemError as e:
        if "VARIANTS" not in str(e):
            raise
        path.write_text(group_source(traced, group, owner, doc, fixed=True))
    return path
