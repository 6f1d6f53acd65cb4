"""The optimized model as a Python file that needs only torch, triton and the files saved beside it.

`save_model(model, "optimized_model.py", problem_file)` writes

    optimized_model.py            build() and get_inputs(); the swap wrappers (the same as swap.py's, in brief)
    optimized_model_parts/
        model.py                  the user's problem file, as it is (its Model builds the user's module tree)
        kernel_01.py ...          each swapped module's generated kernel.py (a torch.library custom op)
        state_dict.pt             the model's state_dict (build() maps it to its device)

build() makes `Model(*get_init_inputs())` on the device, casts it to the dtype it was optimized in, puts it in
the modes it was in, loads the state_dict (assign=True: each tensor keeps the saved dtype), then replaces each
swapped module by a wrapper that calls its kernel with the module's argument and parameters in the order the
kernel takes them, and the rest of a chain by pass-throughs, as swap.py did. The file imports no kerntailor: a
process without it installed loads it (tests/test_optimize.py checks so in a fresh process).

A model in graph mode (graph.py) is written too: `graph.py` in the parts folder is the swapped graph's forward as
FX prints it (core-ATen ops and `self.kernel_<i>(...)` calls), `graph_kernel_*.py` its kernels and
`graph_constants.pt` the constants the export lifted; build() sets the same guarded forward on the instance (any
call unlike the optimized one runs the class's forward). The graph names the device it was optimized on: on another
device the guard sends every call to the class's forward. What the file cannot write (a pytree without
serialization, a graph that reads module attributes) is refused in one line.

What is saved is read from the optimized model itself (its Tailored modules), so the file rebuilds the model that
was verified, not a description of it. The problem file's Model must build the same state_dict keys and shapes
(checked on the meta device before anything is written).
"""

from __future__ import annotations

import datetime
import pprint
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from kerntailor.errors import KerntailorError
from kerntailor.optimizing.graph import graph_forward
from kerntailor.optimizing.swap import Tailored


@dataclass(frozen=True)
class SavedSwap:
    """One swap as the saved file redoes it."""

    modules: tuple[str, ...]                     # the module replaced, then the rest of its chain
    slots: tuple[tuple[str, str, int, str], ...]  # (kind, name, owner, state) per kernel argument (scope.Slot)
    reshape: tuple[int, ...] | None
    training: bool                               # the mode the kernel was made and verified in
    kernel: str                                  # its kernel.py's file name in the parts folder

    def as_data(self) -> dict:
        return {"modules": self.modules, "slots": self.slots, "reshape": self.reshape, "training": self.training,
                "kernel": self.kernel}


def swaps_of(model: torch.nn.Module) -> list[tuple[SavedSwap, Path]]:
    """Each Tailored module of `model` (in tree order) and its kernel.py's path."""
    found = []
    for _, module in model.named_modules(remove_duplicate=True):
        if not isinstance(module, Tailored):
            continue
        source = getattr(sys.modules.get(type(module.kernel).__module__), "__file__", None)
        if source is None:
            raise KerntailorError(f"the kernel of {module.scope.label} has no file to copy")
        scope = module.scope
        slots = tuple((s.kind, s.name, s.owner, s.state) for s in scope.slots)
        kernel = f"kernel_{len(found) + 1:02d}.py"
        swap = SavedSwap(scope.modules, slots, scope.reshape, module.swapped_training, kernel)
        found.append((swap, Path(source)))
    return found


def save_model(model: torch.nn.Module, path: str | Path, problem_file: str | Path, dtype: str | None = None,
               name: str = "model") -> Path:
    """Write `model` (an optimized one) as `path` and its parts folder (module docstring); returns `path`."""
    path = Path(path)
    if path.suffix != ".py":
        raise KerntailorError(f"--save {path}: the file must end in .py (it is imported)")
    problem_file = Path(problem_file)
    _check_same_tree(model, problem_file, dtype)
    graph = graph_of(model)
    parts = path.parent / f"{path.stem}_parts"
    parts.mkdir(parents=True, exist_ok=True)
    swaps = swaps_of(model)
    shutil.copyfile(problem_file, parts / "model.py")
    for swap, source in swaps:
        shutil.copyfile(source, parts / swap.kernel)
    if graph is not None:
        data, code, constants, kernels = graph
        (parts / "graph.py").write_text(GRAPH_HEADER + code)
        torch.save(constants, parts / "graph_constants.pt")
        for file, source in zip(data["kernels"], kernels):
            shutil.copyfile(source, parts / file)
    torch.save(model.state_dict(), parts / "state_dict.pt")   # as it is: tensors that share storage still do
    modes = tuple(n for n, m in model.named_modules() if n and m.training != model.training)
    path.write_text(_text(name, path.stem, dtype, model.training, modes, [s for s, _ in swaps],
                          graph[0] if graph is not None else None))
    return path


GRAPH_HEADER = ('"""The optimized model\'s forward: the exported core-ATen graph with each swapped group\'s ops '
                'replaced by a call to its kernel (self.kernel_<i>)."""\n'
                "import torch\nfrom torch import device  # noqa: F401\n\ninf = float('inf')\nnan = float('nan')\n")


def graph_of(model: torch.nn.Module):
    """The model's graph forward as save writes it: (data for the file, the graph's code, its constants, each
    kernel's kernel.py path), or None where the model runs its class's forward. KerntailorError (one line) where it
    cannot be written."""
    from torch.utils import _pytree as pytree

    graph = graph_forward(model)
    if graph is None:
        return None
    if any(n.op == "get_attr" for n in graph.graph.graph.nodes):
        raise KerntailorError("save: the model's graph forward reads module attributes, which save does not write: "
                              "optimize with --no-graph (graph=False) for a model of module swaps only")
    try:
        specs = pytree.treespec_dumps(graph.in_spec), pytree.treespec_dumps(graph.out_spec)
    except Exception as e:  # noqa: BLE001  a pytree node type without serialization: one line
        raise KerntailorError(f"save: the model's inputs or outputs are a pytree save cannot write ({e}): optimize "
                              "with --no-graph (graph=False) for a model of module swaps only") from None
    sources = []
    for _, kernel in graph.swaps:
        source = getattr(sys.modules.get(type(kernel).__module__), "__file__", None)
        if source is None:
            raise KerntailorError("save: a kernel of the model's graph forward has no file to copy")
        sources.append(Path(source))
    example = tuple((tuple(e[0]), str(e[1]).removeprefix("torch."), str(e[2])) if isinstance(e, tuple) else e
                    for e in graph.example)
    data = {"reads": tuple(graph.sources), "writes": tuple(graph.targets), "in_spec": specs[0], "out_spec": specs[1],
            "example": example, "training": graph.training,
            "kernels": tuple(f"graph_kernel_{i + 1:02d}.py" for i in range(len(sources)))}
    return data, graph.graph.code, dict(graph.constants), sources


def _check_same_tree(model: torch.nn.Module, problem_file: Path, dtype: str | None) -> None:
    """The problem file's Model builds the optimized model's state_dict keys and shapes (on meta: no memory)."""
    from kerntailor.problem.load import build_model, exec_module

    if not problem_file.is_file():
        raise KerntailorError(f"save: no such problem file {problem_file}")
    module = exec_module(problem_file.read_text(), problem_file)
    built = build_model(module, "meta", dtype, problem_file.stem).state_dict()
    ours = model.state_dict()
    if list(built) != list(ours):
        raise KerntailorError(f"save: {problem_file}'s Model has other state_dict keys than the optimized model "
                              f"({sorted(set(built) ^ set(ours))[:3]} ...): give the file of the model's own class")
    for k, v in ours.items():
        if tuple(built[k].shape) != tuple(v.shape):
            raise KerntailorError(f"save: {problem_file}'s Model makes {k} of shape {tuple(built[k].shape)}, "
                                  f"the optimized model's is {tuple(v.shape)}")


def _text(name: str, stem: str, dtype: str | None, training: bool, modes: tuple[str, ...],
          swaps: list[SavedSwap], graph: dict | None = None) -> str:
    parts = f"{stem}_parts"
    from kerntailor import __version__
    from kerntailor.problem.spec import DTYPES

    torch_dtype = str(DTYPES[dtype]).removeprefix("torch.") if dtype else None
    day = datetime.date.today().isoformat()
    header = (f'"""{name}, optimized by kerntailor {__version__} on {day}: the Model of {parts}/model.py\n'
              f"with {len(swaps)} module(s) running generated Triton kernels ({parts}/kernel_*.py, torch.library "
              f"custom ops),\nits weights from {parts}/state_dict.pt. "
              "Imports torch, triton (through the kernels) and those files; not kerntailor.\n\n"
              f"    import {stem}\n"
              f"    model = {stem}.build()   # on the GPU when there is one; without, set TRITON_INTERPRET=1\n"
              f'    out = model(*{stem}.get_inputs())\n"""\n')
    data = (f"PARTS = pathlib.Path(__file__).resolve().parent / {parts!r}\n"
            f"DTYPE = {torch_dtype!r}   # the floating dtype the model was cast to (None: as the file builds it)\n"
            f"TRAINING = {training!r}   # the model's mode when it was optimized\n"
            f"OTHER_MODE = {modes!r}   # modules in the other mode\n"
            f"SWAPS = {pprint.pformat(tuple(s.as_data() for s in swaps), width=116, sort_dicts=False)}\n"
            f"GRAPH = {pprint.pformat(graph, width=116, sort_dicts=False)}   # the graph forward (None: the class's)\n")
    return header + TEMPLATE_IMPORTS + data + TEMPLATE_CODE


TEMPLATE_IMPORTS = """
import importlib.util
import pathlib

import torch
from torch import nn
from torch.utils import _pytree as pytree

"""

TEMPLATE_CODE = '''

def _load(file: str):
    """A file of the parts folder as a module (the folder need not be on sys.path)."""
    name = f"{__name__}__{file[:-3]}"
    spec = importlib.util.spec_from_file_location(name, PARTS / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _device(device):
    return torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))


def get_inputs(device=None) -> list:
    """The problem file's example inputs on `device`, floating ones in DTYPE."""
    with _device(device):
        values = _load("model.py").get_inputs()
    cast = getattr(torch, DTYPE) if DTYPE else None
    return [v.to(cast) if cast and isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def build(device=None) -> nn.Module:
    """The optimized model on `device` (the GPU when there is one)."""
    device = _device(device)
    user = _load("model.py")
    with device:
        model = user.Model(*getattr(user, "get_init_inputs", list)())
    if DTYPE:
        model = model.to(getattr(torch, DTYPE))
    model.train(TRAINING)
    for name in OTHER_MODE:
        model.get_submodule(name).training = not TRAINING
    model.load_state_dict(torch.load(PARTS / "state_dict.pt", map_location=device, weights_only=True), assign=True)
    for swap in SWAPS:
        model = _install(model, swap)
    if GRAPH is not None:   # on the instance: the class, the module tree and the state_dict stay the user's
        object.__setattr__(model, "forward", GraphForward(model, device))
    return model


def _adopt(new: nn.Module, original: nn.Module) -> None:
    """`new` holds `original`'s parameters, buffers and children under the same names (the state_dict is kept)."""
    new.__dict__.update(_parameters=dict(original._parameters), _buffers=dict(original._buffers),
                        _modules=dict(original._modules),
                        _non_persistent_buffers_set=set(original._non_persistent_buffers_set))
    new.training = original.training
    object.__setattr__(new, "original", original)


class PassThrough(nn.Module):
    """A chain's later module: the kernel at the chain's first computed its result, so it returns its argument
    (in the mode the kernel was not made for, the module's own forward runs)."""

    def __init__(self, original: nn.Module, swap: dict):
        super().__init__()
        _adopt(self, original)
        object.__setattr__(self, "swap", swap)

    def forward(self, x):
        return self.original(x) if self.training != self.swap["training"] else x

    def train(self, mode: bool = True):
        super().train(mode)
        self.original.training = mode
        return self


class Swapped(PassThrough):
    """A module whose forward is a generated kernel, called with the module's argument and the parameters and
    buffers it reads, in the kernel's order."""

    def __init__(self, original: nn.Module, swap: dict, kernel: nn.Module, followers: tuple):
        super().__init__(original, swap)
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "followers", followers)

    def forward(self, *args, **kwargs):
        if self.training != self.swap["training"]:
            return self.original(*args, **kwargs)
        args_taken = sum(1 for kind, *_ in self.swap["slots"] if kind == "arg")
        if kwargs or len(args) != args_taken:
            raise TypeError(f"{self.swap['modules'][0] or 'the model'} was optimized for a call with {args_taken} "
                            f"positional argument(s), got {len(args)} and keywords {sorted(kwargs)}")
        given = iter(args)
        tensors = [next(given) if kind == "arg" else self._state(owner, state)
                   for kind, _, owner, state in self.swap["slots"]]
        out = self.kernel(*tensors)
        return out if self.swap["reshape"] is None else out.reshape(self.swap["reshape"])

    def _state(self, owner: int, state: str):
        value = self if owner == 0 else self.followers[owner - 1]
        for part in state.split("."):
            value = getattr(value, part)
        return value


class GraphForward:
    """The model's forward as graph.py (the exported graph with the kernels in place of the groups' ops), on a call
    like the one it was optimized for (the same pytree of arguments, each tensor of its shape, dtype and device, the
    others equal, the modules in their modes, no gradient needed); any other call runs the class's forward."""

    def __init__(self, model: nn.Module, device):
        self.original = type(model).forward.__get__(model)
        self.graph = nn.Module()   # not in the model's tree: the state_dict stays the user's
        for i, file in enumerate(GRAPH["kernels"]):
            self.graph.add_module(f"kernel_{i}", _load(file).ModelNew())
        self.fn = _load("graph.py").forward
        constants = torch.load(PARTS / "graph_constants.pt", map_location=device, weights_only=True)
        self.reads = [self._read(model, kind, what, constants) for kind, what in GRAPH["reads"]]
        self.writes = [None if t is None else ("input", t[1]) if t[0] == "input" else ("state", _store(model, t))
                       for t in GRAPH["writes"]]
        self.in_spec, self.out_spec = pytree.treespec_loads(GRAPH["in_spec"]), pytree.treespec_loads(GRAPH["out_spec"])
        self.example = [(e[0], getattr(torch, e[1]), torch.device(e[2])) if isinstance(e, tuple) else e
                        for e in GRAPH["example"]]
        self.modules = tuple(model.modules())

    @staticmethod
    def _read(model, kind, what, constants):
        if kind in ("parameter", "buffer"):
            return ("state", _store(model, (kind, what)))
        return ("value", constants[what]) if kind == "constant" else ("input", what)

    def __call__(self, *args, **kwargs):
        flat, spec = pytree.tree_flatten((args, kwargs))
        if not self._matches(flat, spec):
            return self.original(*args, **kwargs)
        values = [w[0][w[1]] if k == "state" else flat[w] if k == "input" else w for k, w in self.reads]
        user = []
        for write, value in zip(self.writes, self.fn(self.graph, *values)):
            if write is None:
                user.append(value)
            elif write[0] == "state":
                write[1][0][write[1][1]].copy_(value)
            else:
                flat[write[1]].copy_(value)
        return pytree.tree_unflatten(user, self.out_spec)

    def _matches(self, flat, spec) -> bool:
        if spec != self.in_spec or len(flat) != len(self.example):
            return False
        for v, ex in zip(flat, self.example):
            if isinstance(v, torch.Tensor):
                if not isinstance(ex, tuple) or (tuple(v.shape), v.dtype, v.device) != ex:
                    return False
            elif isinstance(ex, tuple) or v != ex:
                return False
        if tuple(m.training for m in self.modules) != tuple(GRAPH["training"]):
            return False
        if torch.is_grad_enabled():
            tensors = [v for v in flat if isinstance(v, torch.Tensor)] + [w[0][w[1]] for k, w in self.reads
                                                                          if k == "state"]
            return not any(t.requires_grad for t in tensors)
        return True


def _store(model: nn.Module, target) -> tuple:
    """(the dict that holds a parameter or buffer, its name) for a state_dict name."""
    kind, name = target
    holder, _, leaf = name.rpartition(".")
    owner = model.get_submodule(holder)
    return (owner._parameters if kind == "parameter" else owner._buffers), leaf


def _install(model: nn.Module, swap: dict) -> nn.Module:
    originals = [model.get_submodule(m) for m in swap["modules"]]
    followers = tuple(PassThrough(o, swap) for o in originals[1:])
    swapped = Swapped(originals[0], swap, _load(swap["kernel"]).ModelNew(), followers)
    if not swap["modules"][0]:
        return swapped
    for path, new in zip(swap["modules"], (swapped, *followers)):
        parent, _, leaf = path.rpartition(".")
        (model.get_submodule(parent) if parent else model)._modules[leaf] = new
    return model
'''
