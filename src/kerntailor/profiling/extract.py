"""A fusion group written out as a standalone KernelBench-format problem file.

The group's ops are cut from the exported core-ATen program (the one its IR was lowered from): the FX nodes
that lowered to its IR nodes, with the views, constants and `getitem`s between them (nodes that lowered to no
IR node of any group, pulled in from the group's side). What it reads from outside (the model's inputs and
parameters, other groups' results) becomes forward()'s arguments, made by get_inputs() with the real shapes
and dtypes (random values: a parameter's, a mask's actual values are not kept). What others read from it is
returned. An FX node that lowered to IR nodes of several groups (a convolution with its bias: the product in
one group, the bias add in the next) is written whole into each group's file: such a file holds a little more
than its group, and its docstring names what (`extra_nodes`).

The inputs' sizes are module-level constants (dim0 = 1024, ...) that the problem loader shrinks into the small
and odd variants the referee judges. forward() reads none of them: a candidate module (the library path's is
the file itself, `ModelNew = Model`) is loaded once, at the constants as written, and called at every variant.
So a size inside forward (a view's, an expand's, a new tensor's, a slice's end, an even split's) is read at
run time (`_follow_inputs`): the dims a view keeps from its input, the one size a view leaves free (-1), a dim
over the count of its equal parts, an input's dim or a product of adjacent dims of one input. One that none of
these expresses stays the traced literal: a variant that moves it fails the loader's meta run, so the loader
does not take it (the file is judged at the sizes that keep it, or at its real ones: VARIANTS = {}).
"""

from __future__ import annotations

import math
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
    group_of = {n: g.name for g in groups for n in g.nodes if n not in g.recomputed}
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
    sizes = _Sizes(cut, inputs, env)
    for n in order:
        env[n] = cut.node_copy(n, lambda a: env[a])
        _follow_inputs(env[n], n, sizes)
        if "device" in n.kwargs and first is not None:   # traced on meta: make constants where the inputs are
            env[n].kwargs = {**n.kwargs, "device": _device_of(cut, env[n], first)}
    outs = [env[n] for n in users_outside] or [env[order[-1]]]
    cut.output(outs[0] if len(outs) == 1 else tuple(outs))
    code = fx.GraphModule(torch.nn.Module(), cut).code
    forward = "\n".join(("    " + line) if line.strip() else "" for line in code.strip("\n").splitlines())
    names = _size_names(inputs)
    sizes = "".join(f"{n} = {v}\n" for v, n in names.items()) + ("VARIANTS = {}  " + FIXED + "\n" if fixed else "")
    return TEMPLATE.format(doc=doc, forward=forward, sizes=sizes,
                           inputs=", ".join(_named_sizes(_make_input(a), names) for a in inputs))


# aten ops that take a list of sizes: the argument's position
_SHAPED = {"view.default": 1, "_unsafe_view.default": 1, "reshape.default": 1, "expand.default": 1,
           "full.default": 0, "zeros.default": 0, "ones.default": 0, "empty.memory_format": 0,
           "new_full.default": 1, "new_zeros.default": 1, "new_ones.default": 1, "new_empty.default": 1}
_FREE_ONE = {"view.default", "_unsafe_view.default", "reshape.default"}   # their list may hold one -1
# aten ops that take one size as an int: the argument's position (a slice's end, arange's end)
_SIZED = {"slice.Tensor": 3, "arange.default": 0, "arange.start": 1}


class _Sizes:
    """Reads sizes at run time in the cut graph: a tensor's dim (`dim`), or a size by its value from the inputs
    (`of`: an input's dim, or the product of adjacent dims of one input; None where no input has it). Values below
    MIN_SIZE are structure (a batch of 2, a head count), as for the loader: `of` never reads them. Each node made
    goes in front of the node that reads it."""

    def __init__(self, cut, inputs, env):
        self.cut, self.made = cut, {}
        self.runs: dict[int, tuple] = {}
        for a in inputs:
            shape = _shape(a)
            for i in range(len(shape)):
                for j in range(i + 1, len(shape) + 1):
                    self.runs.setdefault(math.prod(shape[i:j]), (env[a], tuple(range(i, j))))

    def dim(self, tensor, d: int, before):
        import torch

        if (tensor, d) not in self.made:
            with self.cut.inserting_before(before):
                self.made[tensor, d] = self.cut.call_function(torch.ops.aten.sym_size.int, (tensor, d))
        return self.made[tensor, d]

    def of(self, size: int, before):
        if size < _min_size() or size not in self.runs:
            return None
        tensor, dims = self.runs[size]
        product = self.dim(tensor, dims[0], before)
        for d in dims[1:]:
            with self.cut.inserting_before(before):
                product = self.cut.call_function(operator.mul, (product, self.dim(tensor, d, before)))
        return product


def _shape(node) -> tuple[int, ...]:
    return tuple(int(s) for s in getattr(node.meta.get("val"), "shape", ()))


def _follow_inputs(copy, original, sizes: _Sizes) -> None:
    """The copied node's literal sizes read at run time (module docstring), in place; `original` (the exported
    program's node) has the traced shapes."""
    op = str(original.target).removeprefix("aten.") if original.op == "call_function" else ""
    i = _SIZED.get(op)
    if i is not None and len(copy.args) > i and type(copy.args[i]) is int:
        found = sizes.of(copy.args[i], copy)
        if found is not None:
            copy.args = (*copy.args[:i], found, *copy.args[i + 1:])
        return
    if op == "split_with_sizes.default":
        _split_evenly(copy, original, sizes)
        return
    i = _SHAPED.get(op)
    if i is None or len(copy.args) <= i or not isinstance(copy.args[i], (list, tuple)):
        return
    shape = list(copy.args[i])
    if op in _FREE_ONE:
        _reshaped(shape, _shape(original.args[0]), copy, sizes)
    elif op == "expand.default":   # a dim the input has already: -1 keeps it (dims aligned from the right)
        have = _shape(original.args[0])
        for k, s in enumerate(shape):
            j = k - (len(shape) - len(have))
            if type(s) is int and s > 1 and 0 <= j < len(have) and have[j] == s:
                shape[k] = -1
    for k, s in enumerate(shape):
        if type(s) is int and s > 1:
            shape[k] = sizes.of(s, copy) or s
    copy.args = (*copy.args[:i], shape, *copy.args[i + 1:])


def _split_evenly(copy, original, sizes: _Sizes) -> None:
    """A split into equal parts of the whole dim (q, k and v of a fused projection): each part the dim's size
    over their count, read at run time. Unequal parts are kept as traced."""
    parts, d = list(copy.args[1]), copy.args[2] if len(copy.args) > 2 else 0
    have = _shape(original.args[0])
    if not have or len(set(parts)) != 1 or not all(type(s) is int for s in parts) or sum(parts) != have[d]:
        return
    with sizes.cut.inserting_before(copy):
        part = sizes.cut.call_function(operator.floordiv, (sizes.dim(copy.args[0], d % len(have), copy), len(parts)))
    copy.args = (copy.args[0], [part] * len(parts), *copy.args[2:])


def _reshaped(shape: list, source: tuple[int, ...], copy, sizes: _Sizes) -> None:
    """A view's or reshape's sizes, in place: the dims it keeps at either end read from its input; of those it
    splits or merges between, the largest size left becomes -1 (the rest are read by value, or kept)."""
    if -1 in shape or not all(type(s) is int for s in shape):
        return
    tensor = copy.args[0]
    head = 0
    while head < min(len(shape), len(source)) and shape[head] == source[head]:
        head += 1
    tail = 0
    while tail < min(len(shape), len(source)) - head and shape[-1 - tail] == source[-1 - tail]:
        tail += 1
    middle = range(head, len(shape) - tail)
    left = [k for k in middle if shape[k] >= _min_size()]
    if left:
        shape[max(left, key=lambda k: shape[k])] = -1
    for k in range(head):
        shape[k] = sizes.dim(tensor, k, copy) if shape[k] > 1 else shape[k]
    for t in range(tail):
        k, d = len(shape) - 1 - t, len(source) - 1 - t
        shape[k] = sizes.dim(tensor, d, copy) if shape[k] > 1 else shape[k]


def _min_size() -> int:
    from kerntailor.problem.variants import MIN_SIZE

    return MIN_SIZE


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
