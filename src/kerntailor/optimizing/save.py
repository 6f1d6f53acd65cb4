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

A model in graph mode (graph.py) is refused, in one line: its forward is the exported graph, which this file
does not write (yet); `--no-graph` gives a model of module swaps only.

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
    graph = graph_forward(model)
    if graph is not None:
        raise KerntailorError(f"save: the model runs in graph mode (its forward is the exported graph with "
                              f"{len(graph.swaps)} kernel call(s)), which save does not write yet: optimize with "
                              "--no-graph (graph=False) for a model of module swaps only, which it writes")
    problem_file = Path(problem_file)
    _check_same_tree(model, problem_file, dtype)
    parts = path.parent / f"{path.stem}_parts"
    parts.mkdir(parents=True, exist_ok=True)
    swaps = swaps_of(model)
    shutil.copyfile(problem_file, parts / "model.py")
    for swap, source in swaps:
        shutil.copyfile(source, parts / swap.kernel)
    torch.save(model.state_dict(), parts / "state_dict.pt")   # as it is: tensors that share storage still do
    modes = tuple(n for n, m in model.named_modules() if n and m.training != model.training)
    path.write_text(_text(name, path.stem, dtype, model.training, modes, [s for s, _ in swaps]))
    return path


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
          swaps: list[SavedSwap]) -> str:
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
            f"SWAPS = {pprint.pformat(tuple(s.as_data() for s in swaps), width=116, sort_dicts=False)}\n")
    return header + TEMPLATE_IMPORTS + data + TEMPLATE_CODE


TEMPLATE_IMPORTS = """
import importlib.util
import pathlib

import torch
from torch import nn

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
